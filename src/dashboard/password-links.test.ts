import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { Browser, member, password, signedIn } from '../test-support/dashboard/test-session.js';

describe('POST /dashboard/password-links: an Owner or Admin hands a member their set-password link', () => {
  let s: TestServer;
  let orgA: string;
  let roles: Record<string, string>;
  let owner: Awaited<ReturnType<typeof signedIn>>;
  let admin: Awaited<ReturnType<typeof signedIn>>;
  before(async () => {
    s = await startTestServer();
    orgA = s.tenants.a.orgId;
    owner = await signedIn(s, 'links-owner@example.com', 'Owner');
    admin = await signedIn(s, 'links-admin@example.com', 'Admin');
    const listed = await s.request('GET', `/orgs/${orgA}/roles`, { token: s.tenants.a.token });
    roles = Object.fromEntries(listed.body.roles.map((r: { id: string; name: string }) => [r.name, r.id]));
  });
  after(() => s.close());

  const invite = async (token: string, email: string, role: string) => {
    const res = await s.request('POST', `/orgs/${orgA}/members`, { token, json: { email, roleId: roles[role] } });
    assert.equal(res.status, 201, res.text);
    return res.body.id as string;
  };
  const link = (b: Browser, user_id: string, extra: Record<string, unknown> = {}) => b.request('POST', '/dashboard/password-links', { org_id: orgA, user_id, ...extra });

  test('invite through /v1 → link → the invitee sets a password with it and signs in', async () => {
    const userId = await invite(owner.token, 'Invited@Example.com', 'Developer');
    const res = await link(owner.browser, userId);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.body.user_id, userId);
    assert.equal(res.body.has_password, false);
    const url = new URL(res.body.set_password_url as string);
    assert.equal(`${url.origin}${url.pathname}`, `${s.apiUrl}/dashboard/set-password`);
    assert.match(url.hash, /^#[A-Za-z0-9_-]{43}$/);
    const ttl = Date.parse(res.body.set_password_expires_at) - s.clock.now();
    assert.ok(ttl > 23.9 * 3_600_000 && ttl <= 24 * 3_600_000, `valid ${ttl} ms`);

    const invitee = new Browser(s);
    assert.equal((await invitee.request('POST', '/dashboard/password', { link_token: url.hash.slice(1), password })).status, 200);
    const signIn = await invitee.signIn('invited@example.com');
    assert.equal(signIn.status, 200, signIn.text);
    assert.equal(signIn.body.user.id, userId);
  });

  test('a user with a password gets no link unless reset is asked for; the reset link works and the old password until then', async () => {
    const userId = await member(s, 'has-password@example.com', 'Viewer');
    const plain = await link(admin.browser, userId);
    assert.equal(plain.status, 200, plain.text);
    assert.deepEqual(plain.body, { user_id: userId, has_password: true, set_password_url: null, set_password_expires_at: null });
    const reset = await link(admin.browser, userId, { reset: true });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.has_password, true);
    assert.match(reset.body.set_password_url, /\/dashboard\/set-password#/);
    // The old password still signs in until the new one is set.
    const user = new Browser(s);
    assert.equal((await user.signIn('has-password@example.com')).status, 200);
    const fresh = 'a brand new password here';
    const set = await new Browser(s).request('POST', '/dashboard/password', { link_token: new URL(reset.body.set_password_url).hash.slice(1), password: fresh });
    assert.equal(set.status, 200, set.text);
    // Setting it ended the user's sessions; the old password no longer works, the new one does.
    assert.equal((await user.request('GET', '/dashboard/session')).status, 401);
    assert.equal((await new Browser(s).signIn('has-password@example.com')).status, 401);
    assert.equal((await new Browser(s).signIn('has-password@example.com', fresh)).status, 200);
  });

  test('Origin is checked first, and the session cookie is needed', async () => {
    const userId = await invite(s.tenants.a.token, 'origin-check@example.com', 'Developer');
    const noOrigin = new Browser(s, null);
    noOrigin.cookie = owner.browser.cookie;
    const missing = await link(noOrigin, userId);
    assert.equal(missing.status, 403);
    assert.match(missing.body.error.message, /cross-origin/);
    const foreign = new Browser(s, 'https://evil.example');
    foreign.cookie = owner.browser.cookie;
    assert.equal((await link(foreign, userId)).status, 403);
    const anonymous = await link(new Browser(s), userId);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('www-authenticate'), null);
    assert.equal((await owner.browser.request('POST', '/dashboard/password-links', { org_id: orgA })).status, 400);
  });

  test('Viewer and Developer sessions are refused (403); an Admin may not make one for an Owner, an Owner may', async () => {
    const target = await invite(s.tenants.a.token, 'target@example.com', 'Developer');
    for (const role of ['Viewer', 'Developer']) {
      const who = await signedIn(s, `links-${role.toLowerCase()}@example.com`, role);
      const res = await link(who.browser, target);
      assert.equal(res.status, 403, `${role}: ${res.text}`);
      assert.match(res.body.error.message, new RegExp(`only an Owner or Admin can make password links, and you are an? ${role}`));
    }
    const newOwner = await invite(s.tenants.a.token, 'second-owner@example.com', 'Owner');
    const byAdmin = await link(admin.browser, newOwner);
    assert.equal(byAdmin.status, 403);
    assert.match(byAdmin.body.error.message, /only an Owner can make a password link for an Owner/);
    assert.equal((await link(admin.browser, target)).status, 200);
    const byOwner = await link(owner.browser, newOwner);
    assert.equal(byOwner.status, 200, byOwner.text);
    assert.ok(byOwner.body.set_password_url);
  });

  test('tenancy: another organisation is 403, a user who is not a member of it 404; a member of an organisation the caller does not manage is 403', async () => {
    const outsider = await member(s, 'outsider@example.com', 'Developer', s.tenants.b.orgId);
    const notMember = await link(owner.browser, outsider);
    assert.equal(notMember.status, 404);
    assert.equal(notMember.body.error.code, 'not_found');
    const otherOrg = await owner.browser.request('POST', '/dashboard/password-links', { org_id: s.tenants.b.orgId, user_id: outsider });
    assert.equal(otherOrg.status, 403);
    assert.match(otherOrg.body.error.message, /not a member of this organisation/);
    // The outsider, added to org A too: a link would open their org B membership as well.
    await s.server.ctx.orgs.addMember({ orgId: orgA, email: 'outsider@example.com', role: 'Developer' });
    const both = await link(owner.browser, outsider, { reset: true });
    assert.equal(both.status, 403);
    assert.match(both.body.error.message, /also a member of an organisation whose members you do not manage/);
  });
});
