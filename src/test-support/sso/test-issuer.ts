// A tiny OpenID Provider on 127.0.0.1 for the refusal tests: real HTTP, real RS256 signatures
// with its own published key, and ID tokens it can spoil on purpose (another audience, past
// expiry, another nonce, an unverified or foreign e-mail) — the cases a certified provider
// never produces. The happy path and the browser test use oidc-provider (test-provider.ts).
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Identity {
  email: string;
  email_verified?: boolean;
  name?: string;
}

/** What the next ID tokens get wrong, if anything. */
export interface Spoil {
  audience?: string;
  /** exp this many seconds in the past. */
  expiredSecondsAgo?: number;
  nonce?: string;
  /** Signed with a key the JWKS does not publish. */
  foreignKey?: boolean;
}

export interface TestIssuer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in next. */
  identity: Identity;
  spoil: Spoil;
  /** The issuer the discovery document names, when not its own (a misconfigured provider). */
  discoveryIssuer?: string;
  /** Endpoints the discovery document names instead of its own (a provider pointing elsewhere). */
  endpoints: { jwks_uri?: string; token_endpoint?: string };
  /** Discovery answers 302 to this address instead of the document. */
  discoveryRedirect?: string;
  /** Every token request's form fields (the test checks PKCE was sent). */
  tokenRequests: URLSearchParams[];
  close(): Promise<void>;
}

const b64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

function sign(claims: Record<string, unknown>, key: crypto.KeyObject, kid: string): string {
  const input = `${b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${b64url(crypto.sign('sha256', Buffer.from(input), key))}`;
}

/** `host: 'localhost'` names the issuer http://localhost:PORT (a test's stand-in for a public provider), else http://127.0.0.1:PORT. */
export async function startTestIssuer(options: { clientId?: string; clientSecret?: string; host?: 'localhost' | '127.0.0.1' } = {}): Promise<TestIssuer> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const foreign = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const kid = 'k1';
  const codes = new Map<string, { nonce: string; challenge: string; redirectUri: string; identity: Identity }>();
  const state: TestIssuer = {
    issuer: '',
    clientId: options.clientId ?? 'ops-test-client',
    clientSecret: options.clientSecret ?? 'ops-test-secret-0123456789',
    identity: { email: 'someone@studio.example', email_verified: true },
    spoil: {},
    endpoints: {},
    tokenRequests: [],
    close: async () => {},
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', state.issuer);
    if (url.pathname === '/.well-known/openid-configuration') {
      if (state.discoveryRedirect) return void res.writeHead(302, { location: state.discoveryRedirect }).end();
      return json(res, 200, {
        issuer: state.discoveryIssuer ?? state.issuer,
        authorization_endpoint: `${state.issuer}/authorize`,
        token_endpoint: state.endpoints.token_endpoint ?? `${state.issuer}/token`,
        jwks_uri: state.endpoints.jwks_uri ?? `${state.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post'],
      });
    }
    if (url.pathname === '/jwks') return json(res, 200, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] });
    if (url.pathname === '/authorize') {
      // Signs in whoever `identity` says at once, as a provider with a live session would.
      const q = url.searchParams;
      if (q.get('client_id') !== state.clientId || q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return json(res, 400, { error: 'invalid_request' });
      const code = crypto.randomBytes(16).toString('hex');
      codes.set(code, { nonce: q.get('nonce') ?? '', challenge: q.get('code_challenge')!, redirectUri: q.get('redirect_uri')!, identity: { ...state.identity } });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        state.tokenRequests.push(form);
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (form.get('client_id') !== state.clientId || form.get('client_secret') !== state.clientSecret) return json(res, 401, { error: 'invalid_client' });
        if (!grant || form.get('redirect_uri') !== grant.redirectUri) return json(res, 400, { error: 'invalid_grant' });
        const challenge = crypto.createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url');
        if (challenge !== grant.challenge) return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        const now = Math.floor(Date.now() / 1000);
        const exp = state.spoil.expiredSecondsAgo !== undefined ? now - state.spoil.expiredSecondsAgo : now + 300;
        const claims = {
          iss: state.issuer,
          sub: grant.identity.email,
          aud: state.spoil.audience ?? state.clientId,
          iat: Math.min(now, exp - 60),
          exp,
          nonce: state.spoil.nonce ?? grant.nonce,
          email: grant.identity.email,
          email_verified: grant.identity.email_verified,
          name: grant.identity.name,
        };
        const idToken = sign(claims, state.spoil.foreignKey ? foreign : privateKey, kid);
        json(res, 200, { access_token: crypto.randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: idToken });
      });
      return;
    }
    json(res, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.issuer = `http://${options.host ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
