// The one place that speaks OpenID Connect, through openid-client (panva's certified relying
// party): discovery, the authorization request with PKCE, state and nonce, the code grant and
// every ID token check. No JWT is parsed or checked by hand anywhere in src/sso.
import * as client from 'openid-client';
import { guardedAgent, type GuardOptions } from '../outbound/guarded-agent.js';
import { isLoopbackHttp } from './sso-config.js';
import { callProvider, providerTimeoutMs } from './provider-fetch.js';
import { ProviderCallError, ProviderError, type ProviderCall } from './provider-error.js';

export { providerTimeoutMs };
/** What the sign-in asks the provider for: an ID token with the e-mail and the name. */
export const signInScope = 'openid email profile';
/** At most this many keys, and this many characters of each field, are shown from a JWKS. */
const maxKeysShown = 100;
const maxFieldShown = 200;

export interface ProviderKey {
  kid: string;
  kty: string;
  alg: string;
  use: string;
}

/** The calls to identity providers, all through one guarded dispatcher (src/outbound). */
export interface ProviderClient {
  discover(issuer: string, clientId: string, clientSecret: string): Promise<client.Configuration>;
  fetchKeys(jwksUri: string): Promise<ProviderKey[]>;
  close(): Promise<void>;
}

/** `<issuer>/.well-known/openid-configuration`, as openid-client builds it. */
export function discoveryUrl(issuer: string): string {
  const url = new URL(issuer);
  url.pathname = `${url.pathname}/.well-known/openid-configuration`.replace(/\/\/+/g, '/');
  return url.href;
}

/**
 * The calls to identity providers. Every request — discovery, the JWKS (for "test" and for
 * openid-client's ID token checks), the token endpoint — goes through openid-client's customFetch
 * or fetchKeys into callProvider: the guarded dispatcher, a deadline, no redirect followed, JSON
 * only, and failures that name the call and never quote the answer.
 */
export function providerClient(guard: GuardOptions): ProviderClient {
  const dispatcher = guardedAgent(guard);
  const fetchAs =
    (callOf: (url: string, method: string) => ProviderCall): client.CustomFetch =>
    (url, options) => {
      const call = callOf(url, options.method);
      // Only discovery and the JWKS are read with GET; anything else but 200 there is a failure.
      return callProvider(dispatcher, call, url, { method: options.method, headers: options.headers, body: options.body, signal: options.signal }, call === 'the discovery document' || call === 'the JWKS');
    };
  return {
    /**
     * The provider's configuration from its discovery document, for this client. Checked by
     * openid-client: the document's `issuer` must equal the configured issuer exactly. ID token
     * signatures are checked against the provider's JWKS (enableNonRepudiationChecks), not only
     * trusted for having come over TLS. http is allowed for loopback issuers only (sso-config.ts),
     * and those are reachable only where private addresses are allowed (OPS_OUTBOUND_ALLOW_PRIVATE).
     */
    async discover(issuer, clientId, clientSecret) {
      const url = new URL(issuer);
      const execute = [client.enableNonRepudiationChecks, ...(isLoopbackHttp(url) ? [client.allowInsecureRequests] : [])];
      let config: client.Configuration;
      try {
        config = await client.discovery(url, clientId, { client_secret: clientSecret }, client.ClientSecretPost(clientSecret), {
          execute,
          [client.customFetch]: fetchAs(() => 'the discovery document'),
        });
      } catch (error) {
        // A failed request already names the call (openid-client wraps it: "something went wrong").
        const failedCall = errorChain(error).find((e) => e instanceof ProviderError);
        throw failedCall ?? new ProviderError(`the discovery document (${discoveryUrl(issuer)}): ${describeProviderError(error)}`);
      }
      // From here on openid-client calls the endpoints the document names: each failure says which.
      const jwks = hrefOf(config.serverMetadata().jwks_uri);
      const token = hrefOf(config.serverMetadata().token_endpoint);
      config[client.customFetch] = fetchAs((target, method) => (target === jwks && method === 'GET' ? 'the JWKS' : target === token ? 'the token endpoint' : 'the provider'));
      return config;
    },

    /** The keys the provider publishes at its jwks_uri (for "test the configuration"): kid, kty, alg, use. */
    async fetchKeys(jwksUri) {
      const answer = await callProvider(dispatcher, 'the JWKS', jwksUri, { method: 'GET', headers: { accept: 'application/json, application/jwk-set+json' } }, true);
      const body: unknown = await answer.json();
      const keys = (body as { keys?: unknown } | null)?.keys;
      if (typeof body !== 'object' || body === null || !Array.isArray(keys)) throw new ProviderCallError('the JWKS', jwksUri, 'is not a JSON Web Key Set (no "keys" array)');
      const field = (key: unknown, name: string) => {
        const value = (key as Record<string, unknown> | null)?.[name];
        return typeof value === 'string' ? value.slice(0, maxFieldShown) : '';
      };
      return keys.slice(0, maxKeysShown).map((k: unknown) => ({ kid: field(k, 'kid'), kty: field(k, 'kty'), alg: field(k, 'alg'), use: field(k, 'use') }));
    },

    close: () => dispatcher.close(),
  };
}

function hrefOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
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
  if (!claims) throw new ProviderError('the provider answered without an ID token');
  return claims;
}

/** The errors under `error`, outermost first. */
function errorChain(error: unknown): Error[] {
  const list: Error[] = [];
  for (let e = error; e instanceof Error && list.length < 8; e = e.cause) list.push(e);
  return list;
}

/**
 * Errors whose messages are fixed texts of openid-client and oauth4webapi: they name the check
 * that failed (a claim, a field, a status), never a value the provider sent.
 */
const isLibraryError = (e: Error): boolean =>
  e instanceof client.ClientError ||
  e.name === 'OperationProcessingError' ||
  e.name === 'UnsupportedOperationError' ||
  (e instanceof TypeError && typeof (e as TypeError & { code?: unknown }).code === 'string' && /^ERR_INVALID_(ARG_TYPE|ARG_VALUE|URL)$/.test((e as TypeError & { code: string }).code));

/** An OAuth error field of the provider's, as shown: one line, bounded. */
// eslint-disable-next-line no-control-regex -- control characters are what is removed
const oauthField = (value: string) => value.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, 300);

/**
 * A provider's refusal or a failed check in words a person can act on. Never a secret (messages
 * name claims, not values) and never what a provider answered, but for the OAuth error fields
 * the protocol has it send to be shown (`error`, `error_description`).
 */
export function describeProviderError(error: unknown): string {
  if (error instanceof client.AuthorizationResponseError) return `the provider refused the sign-in: ${oauthField(error.error)}${error.error_description ? ` (${oauthField(error.error_description)})` : ''}`;
  if (error instanceof client.ResponseBodyError) return `the provider's token endpoint refused the code: ${oauthField(error.error)}${error.error_description ? ` (${oauthField(error.error_description)})` : ''}`;
  if (error instanceof client.WWWAuthenticateChallengeError) return `the provider's token endpoint refused the client (HTTP ${error.status} with a WWW-Authenticate challenge): check client_id and client_secret`;
  const errors = errorChain(error);
  const ours = errors.find((e): e is ProviderError => e instanceof ProviderError);
  if (ours) return ours.message;
  if (errors.some((e) => e.name === 'TimeoutError')) return `the provider did not answer within ${providerTimeoutMs / 1000} s`;
  // A parser's message quotes the text it could not parse.
  if (errors.some((e) => e instanceof SyntaxError)) return 'an answer of the provider is not valid JSON';
  // openid-client wraps the check that failed ("unexpected JWT claim value encountered"): the innermost one names the claim.
  let library: Error | undefined;
  for (const e of errors) {
    if (!isLibraryError(e)) break;
    library = e;
  }
  if (library) {
    const status = (library.cause as { status?: unknown } | undefined)?.status;
    return typeof status === 'number' ? `${library.message} (HTTP ${status})` : library.message;
  }
  return `an unexpected ${error instanceof Error ? error.name : typeof error} while calling the provider`;
}
