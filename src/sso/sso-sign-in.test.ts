// The sign-in through the organisation's provider over real HTTP: the test is the browser
// (cookies, redirects followed by hand), the provider a loopback issuer with real signatures
// whose ID tokens a test can spoil (test-issuer.ts).
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { Browser, member, password } from '../test-support/dashboard/test-session.js';
import { dashboardService } from '../dashboard/capability.js';
import { startTestIssuer, type TestIssuer } from '../test-support/sso/test-issuer.js';
import { maxSignInsInFlight } from './sso-service.js';
import { SsoStore } from './sso-store.js';
import { publishAndVerify, startTestDns, type TestDns } from '../test-support/sso/test-dns.js';

/** The callback as a browser requests it, with `cookie`; its redirect is not followed. */
async function callback(s: TestServer, path: string, cookie: string | undefined): Promise<{ status: number; location: string; session?: string }> {
  const res = await fetch(`${s.apiUrl}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const session = res.headers.getSetCookie().find((c) => c.startsWith('ops_session='));
  return { status: res.status, location: res.headers.get('location') ?? '', session: session?.split(';')[0] };
}

interface Attempt {
  /** Where the callback sent the browser. */
  location: string;
  /** The refusal shown on the sign-in page, if refused. */
  refusal?: string;
  browser: Browser;
  callbackPath: string;
  flowCookie: string;
}

describe('single sign-on: e-mail → provider → callback → session', () => {
  let s: TestServer;
  let idp: TestIssuer;
  let dns: TestDns;
  const config = () => ({ issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, email_domains: ['studio.example'], default_role: 'Developer' });

  /** "Sign in with SSO" as the dashboard does it, then the provider's redirect followed to the callback. */
  async function signIn(email: string, browser = new Browser(s)): Promise<Attempt> {
    const start = await browser.request('POST', '/dashboard/sso/start', { email });
    assert.equal(start.status, 200, start.text);
    const flowCookie = browser.cookie!;
    assert.match(browser.lastSetCookie!, /^ops_sso=.+; Path=\/dashboard\/sso; HttpOnly; SameSite=Lax; Max-Age=600$/);
    const atProvider = await fetch(start.body.redirect_url, { redirect: 'manual' });
    assert.equal(atProvider.status, 302, await atProvider.text());
    const at = new URL(atProvider.headers.get('location')!);
    const callbackPath = `${at.pathname}${at.search}`;
    const back = await callback(s, callbackPath, flowCookie);
    assert.equal(back.status, 303);
    const location = back.location;
    const refusal = /#sso_error=(.*)$/.exec(location)?.[1];
    browser.cookie = back.session;
    return { location, refusal: refusal === undefined ? undefined : decodeURIComponent(refusal), browser, callbackPath, flowCookie };
  }

  before(async () => {
    dns = await startTestDns();
    // The provider is on loopback: private addresses are allowed (sso-outbound.test.ts refuses them).
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true', OPS_DNS_SERVERS: dns.server } });
    idp = await startTestIssuer();
    const put = await s.request('PUT', `/orgs/${s.tenants.a.orgId}/sso`, { json: config() });
    assert.equal(put.status, 200, put.text);
    const verified = await publishAndVerify(s, dns, 'studio.example');
    assert.equal(verified.status, 200, verified.text);
  });
  after(async () => {
    await idp.close();
    await s.close();
    await dns.close();
  });
  beforeEach(() => {
    idp.spoil = {};
    idp.identity = { email: 'ada@studio.example', email_verified: true, name: 'Ada' };
  });

  test('first sign-in creates the member with the default role and the same session as a password sign-in; PKCE, state and nonce are sent', async () => {
    const attempt = await signIn('Ada@Studio.example');
    assert.equal(attempt.refusal, undefined, attempt.refusal);
    assert.equal(attempt.location, '/dashboard/');
    const session = await attempt.browser.request('GET', '/dashboard/session');
    assert.equal(session.status, 200, session.text);
    assert.equal(session.body.user.email, 'ada@studio.example');
    assert.deepEqual(session.body.memberships.map((m: { org_id: string; role: string }) => [m.org_id, m.role]), [[s.tenants.a.orgId, 'Developer']]);
    const token = await attempt.browser.token({ org_id: s.tenants.a.orgId, project_id: s.tenants.a.projectId });
    assert.equal(token.status, 200, 'the session exchanges tokens like a password session');
    const sent = idp.tokenRequests.at(-1)!;
    assert.match(sent.get('code_verifier') ?? '', /^[A-Za-z0-9_-]{43,128}$/, 'PKCE verifier sent to the token endpoint');

    // Again: the same member, the role an Owner gave them is kept.
    const members = async () => (await s.request('GET', `/orgs/${s.tenants.a.orgId}/members?limit=100`)).body.members.filter((m: { email: string }) => m.email === 'ada@studio.example');
    const [ada] = await members();
    const viewer = (await s.request('GET', `/orgs/${s.tenants.a.orgId}/roles`)).body.roles.find((r: { name: string }) => r.name === 'Viewer');
    assert.equal((await s.request('PATCH', `/orgs/${s.tenants.a.orgId}/members/${ada.id}`, { json: { roleId: viewer.id } })).status, 200);
    const again = await signIn('ada@studio.example');
    assert.equal(again.refusal, undefined, again.refusal);
    assert.deepEqual((await members()).map((m: { role: { name: string } }) => m.role.name), ['Viewer']);
    // Each sign-in is in the organisation's audit log, written with its session.
    const audit = await s.request('GET', `/orgs/${s.tenants.a.orgId}/audit?action=sso.sign_in`);
    assert.equal(audit.status, 200, audit.text);
    const entries = audit.body.entries as Array<{ actor: { type: string; id: string }; target: { id: string }; outcome: string; details: { email: string; method: string } }>;
    assert.equal(entries.length, 2);
    for (const e of entries) assert.deepEqual([e.actor.type, e.actor.id, e.target.id, e.outcome, e.details.email, e.details.method], ['user', ada.id, ada.id, 'success', 'ada@studio.example', 'sso']);
  });

  const refusals: Array<[string, () => void, RegExp]> = [
    ['an ID token for another audience', () => (idp.spoil.audience = 'someone-else'), /unexpected JWT "aud" \(audience\) claim value/],
    ['an expired ID token', () => (idp.spoil.expiredSecondsAgo = 3600), /unexpected JWT "exp" \(expiration time\) claim value, expiration is past/],
    ['an ID token with another nonce', () => (idp.spoil.nonce = 'not-the-nonce-we-sent'), /unexpected ID Token "nonce" claim value/],
    ['an ID token signed with a key the provider does not publish', () => (idp.spoil.foreignKey = true), /JWT signature verification failed/],
    ['an e-mail the provider has not verified', () => (idp.identity.email_verified = false), /has not verified the e-mail address ada@studio\.example/],
    ['an e-mail outside the allowed domains', () => (idp.identity.email = 'mallory@elsewhere.example'), /mallory@elsewhere\.example is not in a domain allowed .* \(allowed: studio\.example\)/],
  ];
  for (const [what, spoil, message] of refusals) {
    test(`${what} → refused with a clear message, no session, no member`, async () => {
      spoil();
      const attempt = await signIn('ada-refused@studio.example');
      assert.match(attempt.location, /^\/dashboard\/sign-in#sso_error=/);
      assert.match(attempt.refusal!, /^single sign-on refused: /);
      assert.match(attempt.refusal!, message);
      assert.equal(attempt.browser.cookie, undefined, 'no session cookie');
      assert.ok(s.logs.some((l) => l.includes('single sign-on: sign-in refused')));
      // The refusal is in the organisation's audit log (DECISIONS §20: "sign-ins (and refused ones)").
      const audit = await s.request('GET', `/orgs/${s.tenants.a.orgId}/audit?action=sso.sign_in`);
      const newest = (audit.body.entries as Array<{ outcome: string; details: { reason?: string; method: string } }>)[0]!;
      assert.equal(newest.outcome, 'failure');
      assert.equal(newest.details.method, 'sso');
      assert.match(newest.details.reason!, message);
    });
  }

  test('a replayed state (the same callback again) → refused: the state works once', async () => {
    const first = await signIn('ada@studio.example');
    assert.equal(first.refusal, undefined, first.refusal);
    const replay = await callback(s, first.callbackPath, first.flowCookie);
    assert.equal(replay.status, 303);
    assert.match(decodeURIComponent(replay.location), /sso_error=single sign-on refused: this sign-in was already used or has expired \(an unknown or replayed state\)/);
    assert.equal(replay.session, undefined);
  });

  test('a callback without the flow cookie of the browser that started (login CSRF) → refused', async () => {
    const victim = new Browser(s);
    const start = await victim.request('POST', '/dashboard/sso/start', { email: 'ada@studio.example' });
    const atProvider = await fetch(start.body.redirect_url, { redirect: 'manual' });
    const returned = new URL(atProvider.headers.get('location')!);
    const res = await callback(s, `${returned.pathname}${returned.search}`, undefined);
    assert.match(decodeURIComponent(res.location), /started in another browser/);
    assert.equal(res.session, undefined);
    const audit = await s.request('GET', `/orgs/${s.tenants.a.orgId}/audit?action=sso.sign_in`);
    const newest = (audit.body.entries as Array<{ outcome: string; details: { reason?: string; email: string } }>)[0]!;
    assert.equal(newest.outcome, 'failure');
    assert.match(newest.details.reason!, /started in another browser/);
    assert.equal(newest.details.email, '', 'no e-mail is known before the provider answered');
  });

  test('start: an e-mail whose domain has no single sign-on → 404; not an e-mail → 400; no Origin → 403', async () => {
    const browser = new Browser(s);
    const unknown = await browser.request('POST', '/dashboard/sso/start', { email: 'x@nowhere.example' });
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.error.message, /no organisation signs in with single sign-on for nowhere\.example: sign in with your password/);
    const bad = await browser.request('POST', '/dashboard/sso/start', { email: 'no-at-sign' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.field, 'email');
    const crossSite = await new Browser(s, null).request('POST', '/dashboard/sso/start', { email: 'ada@studio.example' });
    assert.equal(crossSite.status, 403);
  });

  test('start: at most 500 sign-ins of an organisation in flight → 429 with Retry-After; expired ones do not count', async () => {
    const db = s.server.ctx.metadata.db;
    const inFlight = await db.selectFrom('sso_logins').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', s.tenants.a.orgId).where('expires_at', '>', new Date().toISOString()).executeTakeFirstOrThrow();
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const rows = Array.from({ length: maxSignInsInFlight - Number(inFlight.n) }, (_, i) => ({ state_hash: `filler-${i}`, org_id: s.tenants.a.orgId, browser_hash: 'x', code_verifier: 'x', nonce: 'x', created_at: expiresAt, expires_at: expiresAt }));
    for (let i = 0; i < rows.length; i += 100) await db.insertInto('sso_logins').values(rows.slice(i, i + 100)).execute();
    const full = await new Browser(s).request('POST', '/dashboard/sso/start', { email: 'ada@studio.example' });
    assert.equal(full.status, 429, full.text);
    assert.equal(full.headers.get('retry-after'), '60');
    assert.match(full.body.error.message, /too many single sign-ons of this organisation are in progress/);
    await db.updateTable('sso_logins').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('state_hash', 'like', 'filler-%').execute();
    assert.equal((await new Browser(s).request('POST', '/dashboard/sso/start', { email: 'ada@studio.example' })).status, 200);
    assert.ok((await s.server.ctx.metadata.db.selectFrom('sso_logins').select('state_hash').where('state_hash', 'like', 'filler-%').execute()).length > 0);
    const purged = await new SsoStore(db).purge(new Date().toISOString());
    assert.ok(purged >= rows.length, 'expired sign-ins are purged');
  });

  test("a member of another organisation is not signed in by this organisation's provider", async () => {
    await s.server.ctx.orgs.addMember({ orgId: s.tenants.b.orgId, email: 'both@studio.example', role: 'Viewer' });
    idp.identity.email = 'both@studio.example';
    const attempt = await signIn('both@studio.example');
    assert.match(attempt.refusal ?? '', /both@studio\.example is also a member of another organisation/);
  });

  test('an unverified domain routes no "Sign in with SSO" and signs no one up; once verified, it does', async () => {
    const put = await s.request('PUT', `/orgs/${s.tenants.a.orgId}/sso`, { json: { ...config(), email_domains: ['studio.example', 'games.example'] } });
    assert.equal(put.status, 200, put.text);
    const start = await new Browser(s).request('POST', '/dashboard/sso/start', { email: 'kim@games.example' });
    assert.equal(start.status, 404, start.text);
    assert.match(start.body.error.message, /no organisation signs in with single sign-on for games\.example/);
    // Begun with a verified domain, the provider answering with an address in the unverified one.
    idp.identity.email = 'kim@games.example';
    const refused = await signIn('ada@studio.example');
    assert.match(refused.refusal ?? '', /kim@games\.example is not in a domain allowed to sign in to this organisation \(allowed: studio\.example\)/);
    const kim = async () => (await s.request('GET', `/orgs/${s.tenants.a.orgId}/members?limit=100`)).body.members.filter((m: { email: string }) => m.email === 'kim@games.example');
    assert.deepEqual(await kim(), [], 'no member made');

    assert.equal((await publishAndVerify(s, dns, 'games.example')).status, 200);
    const signedIn = await signIn('kim@games.example');
    assert.equal(signedIn.refusal, undefined, signedIn.refusal);
    assert.deepEqual((await kim()).map((m: { role: { name: string } }) => m.role.name), ['Developer']);
  });

  test('enforce: password sign-in refused for members with a message naming SSO, not for the primary owner; a wrong password still says only that', async () => {
    await member(s, 'pat@studio.example', 'Admin');
    assert.equal((await new Browser(s).signIn('pat@studio.example')).status, 200, 'allowed before enforce');
    const { link_token } = await dashboardService(s.server.ctx).issuePasswordLink(s.tenants.a.userId);
    assert.equal((await new Browser(s).request('POST', '/dashboard/password', { link_token, password })).status, 200);

    const put = await s.request('PUT', `/orgs/${s.tenants.a.orgId}/sso`, { json: { ...config(), enforce: true } });
    assert.equal(put.status, 200, put.text);
    const refused = await new Browser(s).signIn('pat@studio.example');
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.error.message, /"Org A" requires single sign-on: use "Sign in with SSO"/);
    const wrong = await new Browser(s).signIn('pat@studio.example', 'not the password at all');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.message, 'wrong e-mail or password');
    const owner = await new Browser(s).signIn('owner-a@example.com');
    assert.equal(owner.status, 200, `the primary owner keeps the password: ${owner.text}`);

    idp.identity.email = 'pat@studio.example';
    const viaSso = await signIn('pat@studio.example');
    assert.equal(viaSso.refusal, undefined, viaSso.refusal);

    const off = await s.request('PUT', `/orgs/${s.tenants.a.orgId}/sso`, { json: { ...config(), enforce: false } });
    assert.equal(off.status, 200);
    assert.equal((await new Browser(s).signIn('pat@studio.example')).status, 200, 'enforce off: passwords again');
  });
});
