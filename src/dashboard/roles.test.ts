import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { roleScopes } from '../auth/role-policy.js';
import { signedIn } from '../test-support/dashboard/test-session.js';

/** DECISIONS.md §17: what a role may do through the dashboard's session tokens (docs/dashboard.md "Roles in the dashboard"). */
describe('dashboard roles: Admins and Owners, Developers and their own tokens', () => {
  let s: TestServer;
  let orgId: string;
  let roles: Record<string, string>;
  before(async () => {
    s = await startTestServer();
    orgId = s.tenants.a.orgId;
    const rows = await s.server.ctx.metadata.db.selectFrom('roles').select(['id', 'name']).where('org_id', '=', orgId).execute();
    roles = Object.fromEntries(rows.map((r) => [r.name, r.id]));
  });
  after(() => s.close());

  const patch = (userId: string, role: string, token?: string) => s.request('PATCH', `/orgs/${orgId}/members/${userId}`, { token, json: { roleId: roles[role] } });
  const remove = (userId: string, token?: string) => s.request('DELETE', `/orgs/${orgId}/members/${userId}`, { token });
  const roleOf = async (userId: string): Promise<string> => {
    const list = await s.request('GET', `/orgs/${orgId}/members?limit=100`);
    return list.body.members.find((m: { id: string }) => m.id === userId).role.name;
  };
  const listed = async (token: string): Promise<string[]> => {
    const res = await s.request('GET', '/tokens?limit=100', { token });
    assert.equal(res.status, 200, res.text);
    return res.body.tokens.map((t: { id: string }) => t.id);
  };

  test("an Admin's session token cannot change, remove or make an Owner (403), nor can a token it made; it changes Developers", async () => {
    const owner = await signedIn(s, 'owner2@example.com', 'Owner');
    const admin = await signedIn(s, 'admin@example.com', 'Admin');
    const dev = await signedIn(s, 'dev-target@example.com', 'Developer');
    const leaving = await signedIn(s, 'dev-leaving@example.com', 'Developer');

    for (const [res, pattern] of [
      [await patch(owner.userId, 'Admin', admin.token), /only an Owner can change the role of an Owner \(this token acts for an Admin of this organisation\): ask an Owner/],
      [await patch(owner.userId, 'Owner', admin.token), /only an Owner can change the role of an Owner/],
      [await patch(s.tenants.a.userId, 'Viewer', admin.token), /only an Owner can change the role of an Owner/],
      [await remove(owner.userId, admin.token), /only an Owner can remove an Owner/],
      [await patch(dev.userId, 'Owner', admin.token), /only an Owner can make a member Owner/],
    ] as const) {
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.code, 'forbidden');
      assert.match(res.body.error.message, pattern);
    }
    assert.equal(await roleOf(owner.userId), 'Owner');
    assert.equal(await roleOf(dev.userId), 'Developer');

    // A token the Admin makes in the dashboard acts for the Admin: no way around the rule.
    const minted = await s.request('POST', '/tokens', { token: admin.token, json: { name: 'admin script', scopes: ['members:read', 'members:write'] } });
    assert.equal(minted.status, 201, minted.text);
    assert.equal(minted.body.created_by_user_id, admin.userId);
    assert.equal((await remove(owner.userId, minted.body.token)).status, 403);
    assert.equal((await patch(dev.userId, 'Owner', minted.body.token)).status, 403);

    // Everything else: other roles, and removing a Developer.
    assert.equal((await patch(dev.userId, 'Viewer', admin.token)).status, 200);
    assert.equal((await patch(dev.userId, 'Admin', minted.body.token)).status, 200);
    assert.equal((await patch(dev.userId, 'Developer', admin.token)).status, 200);
    assert.equal((await remove(leaving.userId, admin.token)).status, 200);
    assert.equal(await roleOf(dev.userId), 'Developer');

    // An Owner's session token may do all three.
    assert.equal((await patch(dev.userId, 'Owner', owner.token)).status, 200);
    assert.equal((await patch(dev.userId, 'Admin', owner.token)).status, 200);
    assert.equal((await patch(dev.userId, 'Owner', owner.token)).status, 200);
    assert.equal((await remove(dev.userId, owner.token)).status, 200);
    // The Owner rules of SPEC.md still hold for Owners (the primary owner stays).
    assert.equal((await remove(s.tenants.a.userId, owner.token)).status, 409);

    // A token that acts for nobody (opsctl, the test's own): SPEC.md's rules, members:write suffices.
    const plain = await s.token(s.tenants.a, ['members:read', 'members:write']);
    assert.equal((await patch(admin.userId, 'Owner', plain)).status, 200);
    assert.equal((await patch(admin.userId, 'Admin', plain)).status, 200);
    assert.equal((await patch(owner.userId, 'Developer', plain)).status, 200);
    assert.equal(await roleOf(owner.userId), 'Developer');
  });

  test('a Developer lists and revokes only the tokens they created; Owner and Admin sessions and plain tokens see all', async () => {
    const dev1 = await signedIn(s, 'dev1@example.com', 'Developer');
    const dev2 = await signedIn(s, 'dev2@example.com', 'Developer');
    const admin = await signedIn(s, 'admin2@example.com', 'Admin');
    const create = (token: string | undefined, name: string, scopes = ['usage:read']) => s.request('POST', '/tokens', { token, json: { name, scopes } });

    const plain = await create(undefined, 'ci');
    assert.equal(plain.status, 201);
    assert.equal(plain.body.created_by_user_id, null);
    const mine = await create(dev1.token, 'dev1 laptop', ['usage:read', 'tokens:write']);
    assert.equal(mine.status, 201, mine.text);
    assert.equal(mine.body.created_by_user_id, dev1.userId);
    const theirs = await create(dev2.token, 'dev2 laptop');
    assert.equal(theirs.body.created_by_user_id, dev2.userId);
    const admins = await create(admin.token, 'admin laptop');
    assert.equal(admins.body.created_by_user_id, admin.userId);

    // Never beyond the role's scopes (tokens:write never grants more than the caller holds).
    const beyond = await create(dev1.token, 'escalate', ['usage:read', 'members:write']);
    assert.equal(beyond.status, 403);
    assert.equal(beyond.body.error.required_scope, 'members:write');

    assert.deepEqual(await listed(dev1.token), [mine.body.id]);
    assert.deepEqual(await listed(dev2.token), [theirs.body.id]);
    const all = [admins.body.id, theirs.body.id, mine.body.id, plain.body.id];
    for (const token of [admin.token, s.tenants.a.token]) assert.deepEqual((await listed(token)).slice(0, 4), all);
    const entry = (await s.request('GET', '/tokens?limit=100')).body.tokens.find((t: { id: string }) => t.id === mine.body.id);
    assert.equal(entry.created_by_user_id, dev1.userId);

    // Another's token (a Developer's, an Admin's, a plain one): 404, as if it did not exist, and it keeps working.
    for (const id of [theirs.body.id, admins.body.id, plain.body.id]) {
      const res = await s.request('DELETE', `/tokens/${id}`, { token: dev1.token });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.equal((await s.request('GET', '/usage', { token: theirs.body.token })).status, 200);
    assert.equal((await s.request('GET', '/usage', { token: plain.body.token })).status, 200);

    // A token a Developer made acts for them: it manages their tokens only, and what it makes is theirs.
    const chained = await create(mine.body.token, 'made by the laptop token');
    assert.equal(chained.body.created_by_user_id, dev1.userId);
    assert.deepEqual(await listed(mine.body.token), [chained.body.id, mine.body.id]);
    assert.equal((await s.request('DELETE', `/tokens/${theirs.body.id}`, { token: mine.body.token })).status, 404);

    // Their own: revoked.
    assert.equal((await s.request('DELETE', `/tokens/${chained.body.id}`, { token: dev1.token })).status, 200);
    assert.equal((await s.request('GET', '/usage', { token: chained.body.token })).status, 401);
    // Admin sessions revoke anyone's.
    assert.equal((await s.request('DELETE', `/tokens/${theirs.body.id}`, { token: admin.token })).status, 200);
    assert.equal((await s.request('GET', '/usage', { token: theirs.body.token })).status, 401);
    assert.deepEqual(await listed(dev2.token), []);

    // Promoted to Admin, the Developer's tokens see every token (the role is read with the token).
    assert.equal((await patch(dev1.userId, 'Admin')).status, 200);
    assert.ok((await listed(mine.body.token)).includes(plain.body.id));
    assert.equal((await patch(dev1.userId, 'Developer')).status, 200);
    assert.deepEqual(await listed(mine.body.token), [mine.body.id]);
  });

  test("a role change ends the member's session tokens; the session stays and its next token has the new role's scopes", async () => {
    const dev = await signedIn(s, 'changing@example.com', 'Developer');
    const target = { org_id: orgId, project_id: s.tenants.a.projectId };
    assert.equal((await s.request('GET', '/usage', { token: dev.token })).status, 200);
    // To the same role: nothing changes, nothing is revoked.
    assert.equal((await patch(dev.userId, 'Developer')).status, 200);
    assert.equal((await s.request('GET', '/usage', { token: dev.token })).status, 200);

    assert.equal((await patch(dev.userId, 'Viewer')).status, 200);
    const old = await s.request('GET', '/usage', { token: dev.token });
    assert.equal(old.status, 401);
    assert.match(old.body.error.message, /revoked/);
    assert.equal((await dev.browser.request('GET', '/dashboard/session')).status, 200);
    const renewed = await dev.browser.token(target);
    assert.deepEqual(renewed.body.scopes, [...roleScopes.Viewer]);
    assert.equal((await s.request('GET', '/usage', { token: renewed.body.token })).status, 200);
  });

  test('a session token whose member left is refused even without its revocation; tokens the member made outlive them', async () => {
    const dev = await signedIn(s, 'gone@example.com', 'Developer');
    const made = await s.request('POST', '/tokens', { token: dev.token, json: { name: 'kept', scopes: ['usage:read', 'tokens:write'] } });
    assert.equal(made.status, 201);
    const fresh = await dev.browser.token({ org_id: orgId, project_id: s.tenants.a.projectId });
    // The membership gone behind the service's back (as if the revocation had failed).
    await s.server.ctx.metadata.db.deleteFrom('memberships').where('org_id', '=', orgId).where('user_id', '=', dev.userId).execute();
    const refused = await s.request('GET', '/usage', { token: fresh.body.token });
    assert.equal(refused.status, 401);
    assert.match(refused.body.error.message, /no longer valid/);
    // DECISIONS.md §12: removing a member does not revoke the tokens made for the project; they
    // still act for that user, so they manage only that user's tokens.
    assert.equal((await s.request('GET', '/usage', { token: made.body.token })).status, 200);
    assert.deepEqual(await listed(made.body.token), [made.body.id]);
  });
});
