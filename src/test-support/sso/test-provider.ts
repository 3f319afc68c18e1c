// oidc-provider (the certified OpenID Provider) on 127.0.0.1 for the end-to-end tests: one
// confidential client, PKCE required, accounts whose id is their e-mail, and its development
// login pages (any login, any password) that the browser test fills in.
import http from 'node:http';
import Provider from 'oidc-provider';
import { freePort } from '../test-process.js';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/** Accounts whose login contains "unverified" have email_verified false. */
export async function startTestProvider(redirectUri: string): Promise<TestProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'opsplatform';
  const clientSecret = 'a-client-secret-for-tests-0123456789';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The e-mail in the ID token itself, not only at the userinfo endpoint.
    conformIdTokenClaims: false,
    cookies: { keys: ['ops-test-provider-cookie-key'] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, email: id, email_verified: !id.includes('unverified'), name: id.split('@')[0] }),
    }),
  });
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
