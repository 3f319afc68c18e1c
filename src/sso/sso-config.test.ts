import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { signedIn } from '../test-support/dashboard/test-session.js';
import { startTestIssuer, type TestIssuer } from '../test-support/sso/test-issuer.js';
import { freePort } from '../test-support/test-process.js';
import { publishAndVerify, startTestDns, type TestDns } from '../test-support/sso/test-dns.js';

// The providers here are on loopback: private addresses are allowed (sso-outbound.test.ts refuses them).
describe('single sign-on configuration: PUT/GET/DELETE /v1/orgs/{orgId}/sso, POST …/sso/test', () => {
  let s: TestServer;
  let idp: TestIssuer;
  let dns: TestDns;
  let path: string;
  let valid: Record<string, unknown>;
  before(async () => {
    dns = await startTestDns();
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true', OPS_DNS_SERVERS: dns.server } });
    idp = await startTestIssuer();
    path = `/orgs/${s.tenants.a.orgId}/sso`;
    valid = { issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, email_domains: ['Studio.example'], default_role: 'Developer', enforce: false };
  });
  after(async () => {
    await idp.close();
    await s.close();
    await dns.close();
  });

  test('not configured: GET and DELETE → 404; PUT without client_secret the first time → 400 naming it', async () => {
    assert.equal((await s.request('GET', path)).status, 404);
    assert.equal((await s.request('DELETE', path)).status, 404);
    const { client_secret: _, ...noSecret } = valid;
    const res = await s.request('PUT', path, { json: noSecret });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.field, 'client_secret');
  });

  test('PUT → 200 with the secret masked and the callback URL; GET the same; a change without client_secret keeps it', async () => {
    const put = await s.request('PUT', path, { json: valid });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.client_secret, '********');
    assert.deepEqual(put.body.email_domains.map((d: { domain: string; verified: boolean }) => [d.domain, d.verified]), [['studio.example', false]], 'lower-cased, unverified');
    assert.equal(put.body.callback_url, `${s.apiUrl}/dashboard/sso/callback`);
    assert.ok(!put.text.includes(idp.clientSecret));
    const got = await s.request('GET', path);
    assert.deepEqual(got.body, put.body);
    assert.ok(!got.text.includes(idp.clientSecret), 'GET never shows the secret');
    const { client_secret: _, ...noSecret } = valid;
    const changed = await s.request('PUT', path, { json: { ...noSecret, default_role: 'Viewer', enforce: true } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual([changed.body.default_role, changed.body.enforce, changed.body.created_at], ['Viewer', true, put.body.created_at]);
    const stored = await s.server.ctx.metadata.db.selectFrom('sso_configs').select('client_secret').where('org_id', '=', s.tenants.a.orgId).executeTakeFirstOrThrow();
    assert.equal(stored.client_secret, idp.clientSecret, 'kept (docs/sso.md: stored as given, like channel secrets)');
    assert.equal((await s.request('PUT', path, { json: valid })).status, 200);
  });

  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['issuer', { issuer: 'not a url' }, /absolute URL/],
    ['issuer', { issuer: 'http://idp.example.com' }, /https/],
    ['issuer', { issuer: 'https://idp.example.com/?tenant=1' }, /query/],
    ['issuer', { issuer: 5 }, /string/],
    ['client_id', { client_id: '' }, /client_id/],
    ['client_id', { client_id: '   ' }, /must not be empty/],
    ['client_secret', { client_secret: '' }, /client_secret/],
    ['email_domains', { email_domains: [] }, /email_domains/],
    ['email_domains', { email_domains: ['not a domain'] }, /not a domain name/],
    ['email_domains', { email_domains: ['localhost'] }, /not a domain name/],
    ['email_domains', { email_domains: 'studio.example' }, /array/],
    ['default_role', { default_role: 'Owner' }, /cannot be Owner/],
    ['default_role', { default_role: 'Janitor' }, /not a role of this organisation/],
    ['enforce', { enforce: 'yes' }, /boolean/],
    ['colour', { colour: 'blue' }, /unknown field "colour"/],
  ];
  for (const [field, change, message] of bad) {
    test(`${field} = ${JSON.stringify(Object.values(change)[0])} → 400 naming ${field}, nothing saved`, async () => {
      const before = (await s.request('GET', path)).body;
      const res = await s.request('PUT', path, { json: { ...valid, ...change } });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.field, field);
      assert.match(res.body.error.message, message);
      assert.deepEqual((await s.request('GET', path)).body, before);
    });
  }

  test('an issuer nobody answers at, or whose discovery document names another issuer → 400 saying what failed', async () => {
    const closed = await s.request('PUT', path, { json: { ...valid, issuer: `http://127.0.0.1:${await freePort()}` } });
    assert.equal(closed.status, 400, closed.text);
    assert.equal(closed.body.error.field, 'issuer');
    assert.match(closed.body.error.message, /^issuer http:\/\/127\.0\.0\.1:\d+ cannot be used: the discovery document \(http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration\) could not be reached \(ECONNREFUSED\)$/);
    idp.discoveryIssuer = 'https://elsewhere.example';
    try {
      const res = await s.request('PUT', path, { json: valid });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.field, 'issuer');
      assert.match(res.body.error.message, /cannot be used: the discovery document \(http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration\): discovered metadata issuer does not match the expected issuer$/);
    } finally {
      delete idp.discoveryIssuer;
    }
  });

  test("another organisation: A's configuration is 403 to B's token; B's own is 404; A's domain → 200 while unverified, 409 once A verified it", async () => {
    const b = s.tenants.b;
    assert.equal((await s.request('GET', path, { token: b.token })).status, 403);
    assert.equal((await s.request('PUT', path, { token: b.token, json: valid })).status, 403);
    assert.equal((await s.request('DELETE', path, { token: b.token })).status, 403);
    assert.equal((await s.request('POST', `${path}/test`, { token: b.token })).status, 403);
    const bPath = `/orgs/${b.orgId}/sso`;
    assert.equal((await s.request('GET', bPath, { token: b.token })).status, 404);
    const bJson = { ...valid, email_domains: ['other.example', 'studio.example'] };
    const unverified = await s.request('PUT', bPath, { token: b.token, json: bJson });
    assert.equal(unverified.status, 200, `naming a domain proves nothing: ${unverified.text}`);
    assert.equal((await publishAndVerify(s, dns, 'studio.example')).status, 200);
    const taken = await s.request('PUT', bPath, { token: b.token, json: bJson });
    assert.equal(taken.status, 409, taken.text);
    assert.equal(taken.body.error.field, 'email_domains');
    assert.match(taken.body.error.message, /studio\.example is verified by another organisation/);
  });

  test("Owner only: an Admin's and a Developer's dashboard tokens → 403, an Owner's → 200", async () => {
    const admin = await signedIn(s, 'admin@example.com', 'Admin');
    for (const [method, url] of [['GET', path], ['PUT', path], ['DELETE', path], ['POST', `${path}/test`]] as const) {
      const res = await s.request(method, url, { token: admin.token, ...(method === 'PUT' ? { json: valid } : {}) });
      assert.equal(res.status, 403, `${method} ${url}: ${res.text}`);
      assert.match(res.body.error.message, /only an Owner/);
    }
    const developer = await signedIn(s, 'dev@example.com', 'Developer');
    const refused = await s.request('GET', path, { token: developer.token });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.required_scope, 'members:write');
    const owner = await signedIn(s, 'second-owner@example.com', 'Owner');
    assert.equal((await s.request('GET', path, { token: owner.token })).status, 200);
  });

  test('test the configuration: what discovery and the JWKS hold; a provider gone → ok false with the problem', async () => {
    const report = await s.request('POST', `${path}/test`);
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.ok, true, report.text);
    assert.equal(report.body.token_endpoint, `${idp.issuer}/token`);
    assert.deepEqual(report.body.keys.map((k: { kid: string; alg: string }) => [k.kid, k.alg]), [['k1', 'RS256']]);
    assert.deepEqual(report.body.problems, []);

    const gone = await startTestIssuer();
    const b = s.tenants.b;
    const bPath = `/orgs/${b.orgId}/sso`;
    assert.equal((await s.request('PUT', bPath, { token: b.token, json: { ...valid, issuer: gone.issuer, client_id: gone.clientId, email_domains: ['b.example'] } })).status, 200);
    await gone.close();
    const down = await s.request('POST', `${bPath}/test`, { token: b.token });
    assert.equal(down.status, 200, down.text);
    assert.equal(down.body.ok, false);
    assert.match(down.body.problems[0], /^the discovery document \(http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration\) could not be reached \(ECONNREFUSED\)$/);
  });

  test('DELETE → 200; then GET → 404 and the domain is free for another organisation to verify', async () => {
    assert.equal((await s.request('DELETE', path)).status, 200);
    assert.equal((await s.request('GET', path)).status, 404);
    const b = s.tenants.b;
    const res = await s.request('PUT', `/orgs/${b.orgId}/sso`, { token: b.token, json: valid });
    assert.equal(res.status, 200, res.text);
    assert.equal((await publishAndVerify(s, dns, 'studio.example', { orgId: b.orgId, token: b.token })).status, 200);
  });

  test('saving and removing the configuration is in the audit log (sso.configure), never its secret', async () => {
    const put = await s.request('PUT', path, { json: { ...valid, email_domains: ['audited.example'] } });
    assert.equal(put.status, 200, put.text);
    assert.equal((await s.request('DELETE', path)).status, 200);
    const audit = await s.request('GET', `/orgs/${s.tenants.a.orgId}/audit?action=sso.configure`);
    assert.equal(audit.status, 200, audit.text);
    const entries = audit.body.entries as Array<{ details: { deleted: boolean; issuer: string | null } }>;
    assert.ok(entries.length >= 2);
    assert.deepEqual(entries.slice(0, 2).map((e) => [e.details.deleted, e.details.issuer]), [[true, null], [false, idp.issuer]]);
    assert.ok(!audit.text.includes(String(valid.client_secret)), 'the client secret is in no entry');
  });
});
