// The one place that speaks OpenID Connect, through openid-client (panva's certified relying
// party): discovery, the authorization request with PKCE, state and nonce, the code grant and
// every ID token check. No JWT is parsed or checked by hand anywhere in src/sso.
import * as client from 'openid-client';
import { isLoopbackHttp } from './sso-config.js';

/** Each request to a provider (discovery, JWKS, token) gives up after this long. */
export const providerTimeoutMs = 5_000;
/** What the sign-in asks the provider for: an ID token with the e-mail and the name. */
export const signInScope = 'openid email profile';

/** fetch with a deadline: a provider that never answers fails the request instead of holding it. */
const fetchWithDeadline: client.CustomFetch = (url, options) => fetch(url, { ...options, signal: AbortSignal.timeout(providerTimeoutMs) } as RequestInit);

/**
 * The provider's configuration from its discovery document, for this client. Checked by
 * openid-client: the document's `issuer` must equal the configured issuer exactly. ID token
 * signatures are checked against the provider's JWKS (enableNonRepudiationChecks), not only
 * trusted for having come over TLS. http is allowed for loopback issuers only (sso-config.ts).
 */
export async function discover(issuer: string, clientId: string, clientSecret: string): Promise<client.Configuration> {
  const url = new URL(issuer);
  const execute = [client.enableNonRepudiationChecks, ...(isLoopbackHttp(url) ? [client.allowInsecureRequests] : [])];
  const config = await client.discovery(url, clientId, { client_secret: clientSecret }, client.ClientSecretPost(clientSecret), {
    execute,
    [client.customFetch]: fetchWithDeadline,
  });
  return config;
}

/** What the discovery document lacks for the authorization code flow, in words ([] when nothing). */
export function missingForCodeFlow(config: client.Configuration): string[] {
  const metadata = config.serverMetadata();
  const missing: string[] = [];
  if (!metadata.authorization_endpoint) missing.push('authorization_endpoint');
  if (!metadata.token_endpoint) missing.push('token_endpoint');
  if (!metadata.jwks_uri) missing.push('jwks_uri');
  if (metadata.response_types_supported && !metadata.response_types_supported.includes('code')) missing.push('response_types_supported does not list "code"');
  if (metadata.code_challenge_methods_supported && !metadata.code_challenge_methods_supported.includes('S256')) missing.push('code_challenge_methods_supported does not list "S256" (PKCE)');
  return missing;
}

/** The keys the provider publishes at its jwks_uri (for "test the configuration"): kid, kty, alg, use. */
export async function fetchKeys(jwksUri: string): Promise<Array<{ kid: string; kty: string; alg: string; use: string }>> {
  const response = await fetch(jwksUri, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(providerTimeoutMs) });
  if (!response.ok) throw new Error(`${jwksUri} answered HTTP ${response.status}`);
  const body = (await response.json()) as { keys?: unknown };
  if (!Array.isArray(body.keys)) throw new Error(`${jwksUri} is not a JSON Web Key Set (no "keys" array)`);
  return body.keys.map((k: Record<string, unknown>) => ({ kid: String(k.kid ?? ''), kty: String(k.kty ?? ''), alg: String(k.alg ?? ''), use: String(k.use ?? '') }));
}

/** A new sign-in's secrets: PKCE verifier, state and nonce, each fresh. */
export function newAuthorization(): { codeVerifier: string; state: string; nonce: string } {
  return { codeVerifier: client.randomPKCECodeVerifier(), state: client.randomState(), nonce: client.randomNonce() };
}

/** Where the browser goes to sign in at the provider. */
export async function authorizationUrl(
  config: client.Configuration,
  request: { redirectUri: string; codeVerifier: string; state: string; nonce: string; loginHint: string },
): Promise<URL> {
  return client.buildAuthorizationUrl(config, {
    redirect_uri: request.redirectUri,
    scope: signInScope,
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(request.codeVerifier),
    code_challenge_method: 'S256',
    state: request.state,
    nonce: request.nonce,
    login_hint: request.loginHint,
  });
}

/**
 * The callback's code exchanged for tokens, with every check of the ID token done by
 * openid-client: issuer, audience (our client_id), expiry, nonce, signature (the provider's
 * JWKS), state. Returns its claims; throws when any check fails.
 */
export async function redeem(config: client.Configuration, callbackUrl: URL, expected: { codeVerifier: string; state: string; nonce: string }): Promise<client.IDToken> {
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: expected.codeVerifier,
    expectedState: expected.state,
    expectedNonce: expected.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  if (!claims) throw new Error('the provider answered without an ID token');
  return claims;
}

/** A provider's refusal or a failed check in words a person can act on (never a secret: messages name claims, not values). */
export function describeProviderError(error: unknown): string {
  if (error instanceof client.AuthorizationResponseError) return `the provider refused the sign-in: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  if (error instanceof client.ResponseBodyError) return `the provider's token endpoint refused the code: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`;
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `the provider did not answer within ${providerTimeoutMs / 1000} s`;
    const cause: unknown = error.cause;
    // A system error under fetch's "fetch failed" (ECONNREFUSED, ENOTFOUND…): its code says it.
    if (cause instanceof Error && typeof (cause as Error & { code?: unknown }).code === 'string' && /^E[A-Z_]+$/.test((cause as Error & { code: string }).code)) {
      return `${error.message}: ${(cause as Error & { code: string }).code}`;
    }
    // openid-client wraps the check that failed ("unexpected JWT claim value encountered"): the inner one names the claim.
    if (cause instanceof Error) return describeProviderError(cause);
    return error.message;
  }
  return String(error);
}
