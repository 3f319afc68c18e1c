// Every call to an identity provider goes through the outbound address policy (src/outbound,
// DECISIONS.md §22): discovery, the JWKS (PUT …/sso and POST …/sso/test) and the token endpoint
// (the sign-in's callback), each pointed at a loopback server answering like a cloud metadata
// service. Refused (the default): nothing reaches it and the error names the call and the
// address. Allowed: what it answers is never repeated, only a fixed description of it.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { leakedMetadata, startMetadataServer, type MetadataServer } from '../test-support/metadata-server.js';
import { Browser } from '../test-support/dashboard/test-session.js';
import { startTestIssuer, type TestIssuer } from '../test-support/sso/test-issuer.js';
import { publishAndVerify, startTestDns, type TestDns } from '../test-support/sso/test-dns.js';

const refusedLoopback = 'was refused: 127.0.0.1 is a loopback address (single sign-on calls identity providers at public addresses only)';

/** studio.example verified for organisation a (a sign-in routes only through a verified domain). */
async function verified(s: TestServer, dns: TestDns): Promise<void> {
  const config = await s.request('GET', `/orgs/${s.tenants.a.orgId}/sso`);
  if ((config.body.email_domains as Array<{ domain: string; verified: boolean }>).some((d) => d.domain === 'studio.example' && d.verified)) return;
  const answer = await publishAndVerify(s, dns, 'studio.example');
  assert.equal(answer.status, 200, answer.text);
}

/** "Sign in with SSO" up to the callback; the refusal the sign-in page would show, if any. */
async function signIn(s: TestServer, email: string): Promise<{ refusal: string | undefined; session: boolean }> {
  const browser = new Browser(s);
  const start = await browser.request('POST', '/dashboard/sso/start', { email });
  assert.equal(start.status, 200, start.text);
  const atProvider = await fetch(start.body.redirect_url, { redirect: 'manual' });
  assert.equal(atProvider.status, 302, await atProvider.text());
  const back = new URL(atProvider.headers.get('location')!);
  const res = await fetch(`${s.apiUrl}${back.pathname}${back.search}`, { redirect: 'manual', headers: { cookie: browser.cookie! } });
  assert.equal(res.status, 303);
  const refusal = /#sso_error=(.*)$/.exec(res.headers.get('location') ?? '')?.[1];
  return { refusal: refusal === undefined ? undefined : decodeURIComponent(refusal), session: res.headers.getSetCookie().some((c) => c.startsWith('ops_session=')) };
}

/** The newest sso.sign_in audit entry's reason. */
async function lastAuditReason(s: TestServer): Promise<string | undefined> {
  const audit = await s.request('GET', `/orgs/${s.tenants.a.orgId}/audit?action=sso.sign_in`);
  return (audit.body.entries as Array<{ details: { reason?: string } }>)[0]?.details.reason;
}

describe('single sign-on with private addresses refused (the default): nothing reaches the metadata service', () => {
  let s: TestServer;
  let meta: MetadataServer;
  let idp: TestIssuer;
  let dns: TestDns;
  let path: string;
  const valid = () => ({ issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, email_domains: ['studio.example'], default_role: 'Developer' });
  before(async () => {
    // `localhost` stands for a public provider here; 127.0.0.1, the metadata server's address, does not.
    dns = await startTestDns();
    s = await startTestServer({ sso: { publicHostsForTests: ['localhost'] }, env: { OPS_DNS_SERVERS: dns.server } });
    meta = await startMetadataServer();
    idp = await startTestIssuer({ host: 'localhost' });
    path = `/orgs/${s.tenants.a.orgId}/sso`;
  });
  after(async () => {
    await idp.close();
    await meta.close();
    await s.close();
    await dns.close();
  });
  beforeEach(() => {
    idp.endpoints = {};
    delete idp.discoveryRedirect;
  });

  test('discovery: an issuer at a loopback or cloud metadata address → 400 naming the call and the refused address; nothing saved', async () => {
    const loopback = await s.request('PUT', path, { json: { ...valid(), issuer: meta.url } });
    assert.equal(loopback.status, 400, loopback.text);
    assert.equal(loopback.body.error.field, 'issuer');
    assert.equal(loopback.body.error.message, `issuer ${meta.url} cannot be used: the discovery document (${meta.url}/.well-known/openid-configuration) ${refusedLoopback}`);
    const metadata = await s.request('PUT', path, { json: { ...valid(), issuer: 'https://169.254.169.254/latest' } });
    assert.equal(metadata.status, 400, metadata.text);
    assert.match(metadata.body.error.message, /the discovery document \(https:\/\/169\.254\.169\.254\/latest\/\.well-known\/openid-configuration\) was refused: 169\.254\.169\.254 is a link-local address \(cloud metadata\)/);
    const ec2v6 = await s.request('PUT', path, { json: { ...valid(), issuer: 'https://[fd00:ec2::254]' } });
    assert.match(ec2v6.body.error.message, /was refused: fd00:ec2::254 is a private address \(cloud metadata\)/);
    assert.deepEqual(meta.hits, []);
    assert.equal((await s.request('GET', path)).status, 404);
  });

  test('the control: the provider standing for a public one is saved and tested ok (the refusals here are the address policy)', async () => {
    const put = await s.request('PUT', path, { json: valid() });
    assert.equal(put.status, 200, put.text);
    const report = await s.request('POST', `${path}/test`);
    assert.equal(report.body.ok, true, report.text);
  });

  test('JWKS: a discovery document whose jwks_uri is the metadata address → PUT 400 and POST …/test name the JWKS and the refused address', async () => {
    const jwks = `${meta.url}/latest/meta-data/`;
    idp.endpoints.jwks_uri = jwks;
    const put = await s.request('PUT', path, { json: valid() });
    assert.equal(put.status, 400, put.text);
    assert.equal(put.body.error.message, `issuer ${idp.issuer} cannot be used: the JWKS (${jwks}) ${refusedLoopback}`);
    idp.endpoints = {};
    assert.equal((await s.request('PUT', path, { json: valid() })).status, 200);
    idp.endpoints.jwks_uri = jwks;
    const report = await s.request('POST', `${path}/test`);
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.ok, false);
    assert.equal(report.body.jwks_uri, jwks);
    assert.deepEqual(report.body.keys, []);
    assert.deepEqual(report.body.problems, [`the JWKS (${jwks}) ${refusedLoopback}`]);
    assert.deepEqual(meta.hits, []);
  });

  test('the token endpoint: a discovery document whose token_endpoint is the metadata address → the sign-in is refused at the callback, naming it', async () => {
    idp.endpoints.token_endpoint = `${meta.url}/json/token`;
    // Saved after the change: the sign-in discovers the provider again.
    assert.equal((await s.request('PUT', path, { json: valid() })).status, 200);
    idp.identity = { email: 'ada@studio.example', email_verified: true };
    await verified(s, dns);
    const attempt = await signIn(s, 'ada@studio.example');
    const expected = `single sign-on refused: the token endpoint (${meta.url}/json/token) ${refusedLoopback}`;
    assert.equal(attempt.refusal, expected);
    assert.equal(attempt.session, false);
    assert.equal(await lastAuditReason(s), expected);
    assert.ok(s.logs.some((l) => l.includes('single sign-on: sign-in refused') && l.includes('the token endpoint')));
    assert.deepEqual(meta.hits, []);
  });

  test('a redirect is not followed: discovery answering 302 to the metadata address → 400 naming the status; nothing reaches it', async () => {
    idp.discoveryRedirect = `${meta.url}/latest/meta-data/`;
    const put = await s.request('PUT', path, { json: valid() });
    assert.equal(put.status, 400, put.text);
    assert.equal(put.body.error.message, `issuer ${idp.issuer} cannot be used: the discovery document (${idp.issuer}/.well-known/openid-configuration) answered HTTP 302, a redirect (redirects are not followed)`);
    assert.deepEqual(meta.hits, []);
  });

  test('nothing the metadata service could say is in any answer or log line', () => {
    assert.deepEqual(leakedMetadata(s.logs.join('\n')), []);
  });
});

describe('single sign-on with private addresses allowed (by the former name, OPS_WEBHOOK_ALLOW_PRIVATE): the metadata service is reached, its answers never repeated', () => {
  let s: TestServer;
  let meta: MetadataServer;
  let idp: TestIssuer;
  let dns: TestDns;
  let path: string;
  const valid = () => ({ issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, email_domains: ['studio.example'], default_role: 'Developer' });
  before(async () => {
    dns = await startTestDns();
    s = await startTestServer({ env: { OPS_WEBHOOK_ALLOW_PRIVATE: 'true', OPS_DNS_SERVERS: dns.server } });
    meta = await startMetadataServer();
    idp = await startTestIssuer();
    path = `/orgs/${s.tenants.a.orgId}/sso`;
  });
  after(async () => {
    await idp.close();
    await meta.close();
    await s.close();
    await dns.close();
  });
  beforeEach(() => {
    idp.endpoints = {};
    meta.hits.length = 0;
  });

  /** Each answer's text, checked for what the metadata service said. */
  const noLeak = (text: string) => assert.deepEqual(leakedMetadata(text), [], text);

  test('the former variable name still allows private addresses: a loopback provider is saved', async () => {
    const put = await s.request('PUT', path, { json: valid() });
    assert.equal(put.status, 200, put.text);
  });

  test('discovery answered by the metadata service: a fixed description, whether its answer is text or JSON', async () => {
    const text = await s.request('PUT', path, { json: { ...valid(), issuer: meta.url } });
    assert.equal(text.status, 400, text.text);
    assert.equal(text.body.error.message, `issuer ${meta.url} cannot be used: the discovery document (${meta.url}/.well-known/openid-configuration) answered HTTP 200 with a body that is not JSON`);
    noLeak(text.text);
    const json = await s.request('PUT', path, { json: { ...valid(), issuer: `${meta.url}/json` } });
    assert.equal(json.status, 400, json.text);
    assert.equal(json.body.error.message, `issuer ${meta.url}/json cannot be used: the discovery document (${meta.url}/json/.well-known/openid-configuration): "response" body "issuer" property must be a string`);
    noLeak(json.text);
    assert.deepEqual(meta.hits, ['/.well-known/openid-configuration', '/json/.well-known/openid-configuration'], 'reached: the policy is off');
  });

  test('JWKS answered by the metadata service: PUT 400 and POST …/test say "not JSON" or "not a JSON Web Key Set"', async () => {
    const cases: Array<[string, string]> = [
      [`${meta.url}/latest/meta-data/`, 'answered HTTP 200 with a body that is not JSON'],
      [`${meta.url}/json/keys`, 'is not a JSON Web Key Set (no "keys" array)'],
    ];
    for (const [jwks, what] of cases) {
      idp.endpoints.jwks_uri = jwks;
      const put = await s.request('PUT', path, { json: valid() });
      assert.equal(put.status, 400, put.text);
      assert.equal(put.body.error.message, `issuer ${idp.issuer} cannot be used: the JWKS (${jwks}) ${what}`);
      noLeak(put.text);
      idp.endpoints = {};
      assert.equal((await s.request('PUT', path, { json: valid() })).status, 200);
      idp.endpoints.jwks_uri = jwks;
      const report = await s.request('POST', `${path}/test`);
      assert.equal(report.status, 200, report.text);
      assert.deepEqual([report.body.ok, report.body.problems], [false, [`the JWKS (${jwks}) ${what}`]]);
      noLeak(report.text);
    }
    assert.equal(meta.hits.length, 4);
  });

  test('the token endpoint answered by the metadata service: the sign-in is refused with a fixed description', async () => {
    const cases: Array<[string, string]> = [
      [`${meta.url}/latest/meta-data/token`, 'the token endpoint (URL) answered HTTP 200 with a body that is not JSON'],
      [`${meta.url}/json/token`, '"response" body "access_token" property must be a string'],
    ];
    for (const [token, what] of cases) {
      idp.endpoints.token_endpoint = token;
      assert.equal((await s.request('PUT', path, { json: valid() })).status, 200);
      await verified(s, dns);
    const attempt = await signIn(s, 'ada@studio.example');
      assert.equal(attempt.refusal, `single sign-on refused: ${what.replace('URL', token)}`);
      assert.equal(attempt.session, false);
      noLeak(attempt.refusal!);
      noLeak((await lastAuditReason(s)) ?? '');
    }
    assert.deepEqual(meta.hits, ['/latest/meta-data/token', '/json/token']);
    noLeak(s.logs.join('\n'));
  });
});
