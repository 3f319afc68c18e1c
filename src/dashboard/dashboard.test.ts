import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { dashboardService } from './capability.js';
import { Browser, member, password } from '../test-support/dashboard/test-session.js';
import { roleScopes } from '../auth/role-policy.js';
import { png } from '../test-support/media/test-files.js';

const hour = 3_600_000;

describe('dashboard sign-in and sessions', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('link → password → sign in → session → token on /v1 → sign out ends session and token', async () => {
    const { user_id } = await s.server.ctx.orgs.addMember({ orgId: s.tenants.a.orgId, email: 'dev@example.com', name: 'Dev', role: 'Developer' });
    const { link_token } = await dashboardService(s.server.ctx).issuePasswordLink(user_id);
    const b = new Browser(s);

    const short = await b.request('POST', '/dashboard/password', { link_token, password: 'too short' });
    assert.equal(short.status, 400);
    assert.equal(short.body.error.code, 'bad_request');
    assert.match(short.body.error.message, /12 characters/);
    assert.equal((await b.request('POST', '/dashboard/password', { link_token, password })).status, 200);
    // Single use.
    const reused = await b.request('POST', '/dashboard/password', { link_token, password: 'another long password' });
    assert.equal(reused.status, 400);
    assert.ok(reused.body.error.request_id);

    const signIn = await b.signIn('Dev@Example.com');
    assert.equal(signIn.status, 200, signIn.text);
    assert.deepEqual(signIn.body, { user: { id: user_id, email: 'dev@example.com', name: 'Dev' } });
    assert.equal(signIn.headers.get('cache-control'), 'no-store');
    const flags = b.lastSetCookie!.split(';').map((p) => p.trim());
    assert.match(flags[0]!, /^ops_session=[A-Za-z0-9_-]{43}$/);
    assert.ok(flags.includes('HttpOnly'));
    assert.ok(flags.includes('SameSite=Strict'));
    assert.ok(flags.includes('Path=/dashboard'));
    assert.ok(!flags.includes('Secure'), 'Secure only with an https public address');

    const session = await b.request('GET', '/dashboard/session');
    assert.equal(session.status, 200);
    assert.deepEqual(session.body.user, { id: user_id, email: 'dev@example.com', name: 'Dev' });
    assert.equal(session.body.preferences, null);
    assert.deepEqual(
      session.body.memberships.map((m: { org_id: string; org_name: string; role: string; projects: Array<{ project_id: string }> }) => [m.org_id, m.org_name, m.role, m.projects.map((p) => p.project_id)]),
      [[s.tenants.a.orgId, 'Org A', 'Developer', [s.tenants.a.projectId, s.tenants.aOther.projectId]]],
    );

    // The switcher, per user.
    const target = { org_id: s.tenants.a.orgId, project_id: s.tenants.aOther.projectId, mode: 'test' };
    const put = await b.request('PUT', '/dashboard/session/preferences', target);
    assert.equal(put.status, 200, put.text);
    assert.deepEqual((await b.request('GET', '/dashboard/session')).body.preferences, target);
    assert.equal((await b.request('PUT', '/dashboard/session/preferences', { ...target, org_id: s.tenants.b.orgId })).status, 403);
    assert.equal((await b.request('PUT', '/dashboard/session/preferences', { ...target, project_id: s.tenants.b.projectId })).status, 404);
    assert.equal((await b.request('PUT', '/dashboard/session/preferences', { ...target, mode: 'staging' })).status, 400);

    const exchanged = await b.token({ org_id: s.tenants.a.orgId, project_id: s.tenants.a.projectId });
    assert.equal(exchanged.status, 200, exchanged.text);
    assert.deepEqual(exchanged.body.scopes, [...roleScopes.Developer]);
    const ttl = Date.parse(exchanged.body.expires_at) - s.clock.now();
    assert.ok(ttl > 14 * 60_000 && ttl <= 15 * 60_000, `expires in ${ttl} ms`);
    const token = exchanged.body.token as string;
    assert.match(token, /^ops_live_/);
    const usage = await s.request('GET', '/usage', { token });
    assert.equal(usage.status, 200);
    const upload = await s.request('POST', '/media/base64', { token, json: { filename: 'p.png', content_type: 'image/png', data: png().toString('base64') } });
    assert.equal(upload.status, 201, upload.text);
    // A Developer's token has no billing:read.
    assert.equal((await s.request('GET', '/billing', { token })).status, 403);
    // Session tokens do not clutter the token list.
    const list = await s.request('GET', '/tokens', { token });
    assert.equal(list.status, 200);
    assert.ok(!list.body.tokens.some((t: { id: string }) => t.id === exchanged.body.token_id));
    // A test-mode token of the other project.
    const testToken = await b.token({ org_id: s.tenants.a.orgId, project_id: s.tenants.aOther.projectId, mode: 'test' });
    assert.match(testToken.body.token, /^ops_test_/);
    assert.equal((await b.token({ org_id: s.tenants.b.orgId, project_id: s.tenants.b.projectId })).status, 403);

    const out = await b.request('DELETE', '/dashboard/session');
    assert.equal(out.status, 200);
    assert.match(b.lastSetCookie!, /^ops_session=; .*Max-Age=0/);
    const stale = new Browser(s);
    stale.cookie = flags[0];
    assert.equal((await stale.request('GET', '/dashboard/session')).status, 401);
    assert.equal((await s.request('GET', '/usage', { token })).status, 401);
    assert.equal((await s.request('GET', '/usage', { token: testToken.body.token })).status, 401);
    assert.equal((await b.request('GET', '/dashboard/session')).status, 401);
  });

  test('a set-password link names its e-mail without being used, and nothing for a link that cannot be used', async () => {
    const { user_id } = await s.server.ctx.orgs.addMember({ orgId: s.tenants.a.orgId, email: 'Named@Example.com', role: 'Viewer' });
    const service = dashboardService(s.server.ctx);
    const { link_token } = await service.issuePasswordLink(user_id);
    const b = new Browser(s);
    const named = await b.request('POST', '/dashboard/password/link', { link_token });
    assert.equal(named.status, 200, named.text);
    assert.deepEqual(named.body, { email: 'named@example.com' });
    assert.equal(named.headers.get('cache-control'), 'no-store');
    // Asked again: the link is still usable, and sets the password once.
    assert.deepEqual((await b.request('POST', '/dashboard/password/link', { link_token })).body, { email: 'named@example.com' });
    assert.equal((await b.request('POST', '/dashboard/password', { link_token, password })).status, 200);
    // Used, unknown, replaced by a newer one or expired: the same answer, naming no one.
    const used = await b.request('POST', '/dashboard/password/link', { link_token });
    assert.equal(used.status, 200);
    assert.deepEqual(used.body, { email: null });
    assert.deepEqual((await b.request('POST', '/dashboard/password/link', { link_token: 'x'.repeat(43) })).body, { email: null });
    const older = await service.issuePasswordLink(user_id);
    const newer = await service.issuePasswordLink(user_id);
    assert.deepEqual((await b.request('POST', '/dashboard/password/link', { link_token: older.link_token })).body, { email: null });
    s.clock.advance(25 * hour);
    try {
      assert.deepEqual((await b.request('POST', '/dashboard/password/link', { link_token: newer.link_token })).body, { email: null });
    } finally {
      s.clock.advance(-25 * hour);
    }
    // An unsafe method like the rest: a foreign page cannot ask.
    assert.equal((await new Browser(s, 'https://evil.example').request('POST', '/dashboard/password/link', { link_token: newer.link_token })).status, 403);
    assert.equal((await b.request('POST', '/dashboard/password/link', {})).status, 400);
  });

  test('the app\'s session check answers null when nobody is signed in (no 401), and clears a stale cookie', async () => {
    const b = new Browser(s);
    const nobody = await b.request('GET', '/dashboard/session/current');
    assert.equal(nobody.status, 200);
    assert.deepEqual(nobody.body, { session: null });
    assert.equal(nobody.headers.get('cache-control'), 'no-store');
    assert.equal(nobody.headers.getSetCookie().length, 0);
    const userId = await member(s, 'current@example.com', 'Developer');
    assert.equal((await b.signIn('current@example.com')).status, 200);
    const cookie = b.cookie;
    const current = await b.request('GET', '/dashboard/session/current');
    assert.equal(current.status, 200);
    assert.deepEqual(current.body.session, (await b.request('GET', '/dashboard/session')).body);
    assert.equal(current.body.session.user.id, userId);
    assert.equal((await b.request('DELETE', '/dashboard/session')).status, 200);
    const stale = new Browser(s);
    stale.cookie = cookie;
    const ended = await stale.request('GET', '/dashboard/session/current');
    assert.equal(ended.status, 200);
    assert.deepEqual(ended.body, { session: null });
    assert.match(stale.lastSetCookie!, /^ops_session=; .*Max-Age=0/);
  });

  test("a Viewer's token reads but cannot write; a role change applies to tokens issued after it", async () => {
    const userId = await member(s, 'viewer@example.com', 'Viewer');
    const b = new Browser(s);
    assert.equal((await b.signIn('viewer@example.com')).status, 200);
    const target = { org_id: s.tenants.a.orgId, project_id: s.tenants.a.projectId };
    const viewer = await b.token(target);
    assert.deepEqual(viewer.body.scopes, ['media:read', 'logs:read', 'members:read', 'usage:read', 'monitors:read']);
    assert.equal((await s.request('GET', '/usage', { token: viewer.body.token })).status, 200);
    assert.equal((await s.request('GET', `/orgs/${s.tenants.a.orgId}/members`, { token: viewer.body.token })).status, 200);
    const write = await s.request('POST', '/media/base64', { token: viewer.body.token, json: { filename: 'p.png', content_type: 'image/png', data: png().toString('base64') } });
    assert.equal(write.status, 403);
    assert.equal(write.body.error.required_scope, 'media:write');

    const roles = await s.request('GET', `/orgs/${s.tenants.a.orgId}/roles`);
    const admin = roles.body.roles.find((r: { name: string }) => r.name === 'Admin').id;
    assert.equal((await s.request('PATCH', `/orgs/${s.tenants.a.orgId}/members/${userId}`, { json: { roleId: admin } })).status, 200);
    const promoted = await b.token(target);
    // Every scope of the Admin role (the same number of other scopes would not do).
    assert.deepEqual([...promoted.body.scopes].sort(), [...roleScopes.Admin].sort());
    assert.equal((await s.request('GET', '/billing', { token: promoted.body.token })).status, 200);
  });

  test('wrong password and unknown e-mail: the same 401', async () => {
    await member(s, 'wrong@example.com', 'Viewer');
    const b = new Browser(s);
    const wrong = await b.signIn('wrong@example.com', 'not the password at all');
    const unknown = await b.signIn('nobody@example.com');
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    assert.equal(wrong.body.error.code, 'unauthorized');
    assert.equal(wrong.body.error.message, unknown.body.error.message);
    assert.equal(wrong.headers.getSetCookie().length, 0);
    assert.equal((await b.request('GET', '/dashboard/session')).status, 401);
  });

  test('unsafe methods need the Origin of this server (CSRF), and the session cookie', async () => {
    await member(s, 'csrf@example.com', 'Developer');
    const noOrigin = new Browser(s, null);
    const foreign = new Browser(s, 'https://evil.example');
    const noOriginSignIn = await noOrigin.signIn('csrf@example.com');
    assert.equal(noOriginSignIn.status, 403);
    assert.equal(noOriginSignIn.body.error.code, 'forbidden');
    assert.equal((await foreign.signIn('csrf@example.com')).status, 403);
    // A cross-origin HTML form post.
    const form = await s.request('POST', `${s.apiUrl}/dashboard/session`, {
      token: null,
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=csrf%40example.com&password=x',
    });
    assert.equal(form.status, 403);

    const b = new Browser(s);
    assert.equal((await b.signIn('csrf@example.com')).status, 200);
    const target = { org_id: s.tenants.a.orgId, project_id: s.tenants.a.projectId, mode: 'live' };
    // The right cookie from a foreign page: refused, and the session lives on.
    for (const headers of [{ origin: 'https://evil.example' }, { origin: 'null' }]) {
      assert.equal((await b.request('POST', '/dashboard/session/token', target, headers)).status, 403);
      assert.equal((await b.request('DELETE', '/dashboard/session', undefined, headers)).status, 403);
    }
    assert.equal((await b.request('GET', '/dashboard/session')).status, 200);
    // The right origin without the cookie.
    const anonymous = new Browser(s);
    for (const [method, path] of [['PUT', '/dashboard/session/preferences'], ['POST', '/dashboard/session/token']] as const) {
      const res = await anonymous.request(method, path, target);
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), null);
    }
    assert.equal((await anonymous.request('DELETE', '/dashboard/session')).status, 401);
  });

  test("a removed member's session ends and their session tokens stop working", async () => {
    const userId = await member(s, 'leaving@example.com', 'Developer');
    const b = new Browser(s);
    assert.equal((await b.signIn('leaving@example.com')).status, 200);
    const token = (await b.token({ org_id: s.tenants.a.orgId, project_id: s.tenants.a.projectId })).body.token as string;
    assert.equal((await s.request('GET', '/usage', { token })).status, 200);
    assert.equal((await s.request('DELETE', `/orgs/${s.tenants.a.orgId}/members/${userId}`)).status, 200);
    assert.equal((await s.request('GET', '/usage', { token })).status, 401);
    assert.equal((await b.request('GET', '/dashboard/session')).status, 401);
    // And they cannot sign in again while a member of nothing.
    assert.equal((await b.signIn('leaving@example.com')).status, 401);
  });

  test('security headers, the redirect, the app\'s pages and its immutable precompressed assets', async () => {
    const root = await fetch(`${s.apiUrl}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/dashboard/');
    const page = await fetch(`${s.apiUrl}/dashboard/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    const html = await page.text();
    assert.match(html, /<div id="app">/);
    // Images and video of the delivery listener are allowed, nothing else foreign.
    assert.match(page.headers.get('content-security-policy')!, new RegExp(`img-src 'self' blob: data: ${new URL(s.cdnUrl).origin};`));
    const script = /<script type="module" crossorigin src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, html);
    const asset = await fetch(`${s.apiUrl}${script}`, { headers: { 'accept-encoding': 'br, gzip' } });
    assert.equal(asset.status, 200);
    assert.equal(asset.headers.get('content-encoding'), 'br');
    assert.match(asset.headers.get('cache-control')!, /max-age=31536000, immutable/);
    assert.match(asset.headers.get('content-type')!, /javascript/);
    // Every page of the app answers its index; deep links (a dataset's schema) too.
    for (const path of ['/dashboard/sign-in', '/dashboard/set-password', '/dashboard/media', '/dashboard/datasets/game']) {
      const res = await fetch(`${s.apiUrl}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(await res.text(), html);
    }
    assert.equal((await fetch(`${s.apiUrl}/dashboard/assets/nothing.js`)).status, 404);
    const b = new Browser(s);
    for (const res of [page, (await b.request('GET', '/dashboard/session')) as unknown as Response]) {
      assert.match(res.headers.get('content-security-policy')!, /default-src 'self'/);
      assert.match(res.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    }
    assert.equal((await b.request('GET', '/dashboard/session')).headers.get('cache-control'), 'no-store');
    const unknown = await b.request('GET', '/dashboard/nothing-here');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'not_found');
    assert.equal(unknown.headers.get('x-content-type-options'), 'nosniff');
    // Not in the /v1 OpenAPI document (like /healthz): these are the dashboard's own, not the API's.
    const doc = await s.request('GET', '/openapi.json');
    assert.ok(!Object.keys(doc.body.paths).some((p) => p.startsWith('/dashboard')));
  });
});

describe('dashboard: time (links, idle and absolute expiry) and purge', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('a link expires after 24 hours', async () => {
    const { user_id } = await s.server.ctx.orgs.addMember({ orgId: s.tenants.a.orgId, email: 'late@example.com', role: 'Viewer' });
    const { link_token } = await dashboardService(s.server.ctx).issuePasswordLink(user_id);
    s.clock.advance(24 * hour + 1_000);
    const res = await new Browser(s).request('POST', '/dashboard/password', { link_token, password });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /expired/);
  });

  test('idle expiry after 12 hours without a request; activity keeps a session until its 7 days', async () => {
    await member(s, 'idle@example.com', 'Viewer');
    const idle = new Browser(s);
    assert.equal((await idle.signIn('idle@example.com')).status, 200);
    const busy = new Browser(s);
    assert.equal((await busy.signIn('idle@example.com')).status, 200);
    s.clock.advance(11 * hour);
    assert.equal((await busy.request('GET', '/dashboard/session')).status, 200);
    s.clock.advance(1.5 * hour);
    assert.equal((await idle.request('GET', '/dashboard/session')).status, 401);
    assert.equal((await busy.request('GET', '/dashboard/session')).status, 200);
    // Used every 11 hours: alive until 7 days after sign-in, then over.
    let elapsed = 12.5 * hour;
    while (elapsed + 11 * hour < 7 * 24 * hour) {
      s.clock.advance(11 * hour);
      elapsed += 11 * hour;
      assert.equal((await busy.request('GET', '/dashboard/session')).status, 200, `at ${elapsed / hour} h`);
    }
    s.clock.advance(7 * 24 * hour - elapsed + 60_000);
    const over = await busy.request('GET', '/dashboard/session');
    assert.equal(over.status, 401);
    assert.match(over.body.error.message, /expired/);
  });

  test('the purge removes idle-expired sessions and spent session tokens', async () => {
    await member(s, 'purge@example.com', 'Viewer');
    const b = new Browser(s);
    assert.equal((await b.signIn('purge@example.com')).status, 200);
    const capped = await b.token({ org_id: s.tenants.a.orgId, project_id: s.tenants.a.projectId });
    s.clock.advance(13 * hour);
    const result = await dashboardService(s.server.ctx).purge();
    assert.ok(result.sessions >= 1, JSON.stringify(result));
    assert.ok(result.tokens >= 1, JSON.stringify(result));
    assert.equal((await s.request('GET', '/usage', { token: capped.body.token })).status, 401);
  });
});

describe('dashboard: sign-in throttling and an https public address', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_PUBLIC_URL: 'https://ops.example.test' } });
  });
  after(() => s.close());

  test('Secure cookie; the public origin is accepted', async () => {
    await member(s, 'secure@example.com', 'Viewer');
    const b = new Browser(s, 'https://ops.example.test');
    const res = await b.signIn('secure@example.com');
    assert.equal(res.status, 200);
    assert.ok(b.lastSetCookie!.split(';').map((p) => p.trim()).includes('Secure'));
  });

  test('10 failed attempts per e-mail, then 429 with Retry-After, even with the right password', async () => {
    await member(s, 'target@example.com', 'Viewer');
    const b = new Browser(s);
    for (let i = 0; i < 10; i++) assert.equal((await b.signIn('target@example.com', `wrong password ${i}`)).status, 401);
    const limited = await b.signIn('TARGET@example.com');
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    // Another e-mail from the same address is still admitted (the address allows more).
    await member(s, 'other@example.com', 'Viewer');
    assert.equal((await b.signIn('other@example.com')).status, 200);
  });

  test('30 failed attempts per client address, then 429 for any e-mail', async () => {
    const b = new Browser(s);
    let status = 0;
    for (let i = 0; i < 40 && status !== 429; i++) status = (await b.signIn(`guess${i}@example.com`, 'wrong password')).status;
    assert.equal(status, 429);
    assert.equal((await b.signIn('other@example.com')).status, 429);
  });
});
