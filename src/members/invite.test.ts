import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { signedIn } from '../test-support/dashboard/test-session.js';

describe('POST /orgs/{orgId}/members (invite)', () => {
  let s: TestServer;
  let orgId: string;
  let roles: Record<string, string>;
  before(async () => {
    s = await startTestServer();
    orgId = s.tenants.a.orgId;
    const listed = await s.request('GET', `/orgs/${orgId}/roles`, { token: s.tenants.a.token });
    roles = Object.fromEntries(listed.body.roles.map((r: { id: string; name: string }) => [r.name, r.id]));
  });
  after(() => s.close());
  const invite = (json: Record<string, unknown>, token = s.tenants.a.token, org = orgId) => s.request('POST', `/orgs/${org}/members`, { token, json });

  test('adds a new user with the role and answers 201 with the member; listed first; a second invite is 409', async () => {
    const res = await invite({ email: ' New.Person@Example.com ', name: 'New Person', roleId: roles.Developer });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['avatar', 'email', 'id', 'joinedAt', 'name', 'role']);
    assert.match(res.body.id, /^usr_/);
    assert.equal(res.body.email, 'new.person@example.com');
    assert.equal(res.body.name, 'New Person');
    assert.deepEqual(res.body.role, { id: roles.Developer, name: 'Developer', isSystem: true });
    const list = await s.request('GET', `/orgs/${orgId}/members`, { token: s.tenants.a.token });
    assert.equal(list.body.members[0].id, res.body.id);
    const again = await invite({ email: 'new.person@example.com', roleId: roles.Viewer });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'conflict');
    assert.match(again.body.error.message, /already a member/);
  });

  test('an existing user of another organisation is added, keeping their name', async () => {
    const res = await invite({ email: 'owner-b@example.com', name: 'ignored', roleId: roles.Viewer });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.id, s.tenants.b.userId);
    const defaulted = await invite({ email: 'fresh@example.com', roleId: roles.Viewer });
    assert.equal(defaulted.body.name, 'fresh');
  });

  test('400 for a role of another organisation, an unknown role, a bad e-mail and extra fields', async () => {
    const foreign = await s.request('GET', `/orgs/${s.tenants.b.orgId}/roles`, { token: s.tenants.b.token });
    const res = await invite({ email: 'x1@example.com', roleId: foreign.body.roles[0].id });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /not a role of this organisation/);
    assert.equal((await invite({ email: 'x2@example.com', roleId: 'rol_nope' })).status, 400);
    assert.equal((await invite({ email: 'not an address', roleId: roles.Viewer })).status, 400);
    assert.equal((await invite({ email: 'x3@example.com', roleId: roles.Viewer, admin: true })).status, 400);
    assert.equal((await invite({ email: 'x4@example.com' })).status, 400);
  });

  test('403 for another organisation and without members:write; a Viewer or Developer session token is refused', async () => {
    assert.equal((await invite({ email: 'x5@example.com', roleId: roles.Viewer }, s.tenants.b.token)).status, 403);
    const readOnly = await s.token(s.tenants.a, ['members:read']);
    const res = await invite({ email: 'x6@example.com', roleId: roles.Viewer }, readOnly);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.required_scope, 'members:write');
    for (const role of ['Viewer', 'Developer']) {
      const { token } = await signedIn(s, `invite-${role.toLowerCase()}@example.com`, role);
      const refused = await invite({ email: `by-${role.toLowerCase()}@example.com`, roleId: roles.Viewer }, token);
      assert.equal(refused.status, 403, `${role}: ${refused.text}`);
      assert.equal(refused.body.error.required_scope, 'members:write');
    }
  });

  test("through the dashboard only an Owner adds an Owner: an Admin's session token gets 403", async () => {
    const admin = await signedIn(s, 'invite-admin@example.com', 'Admin');
    const refused = await invite({ email: 'would-be-owner@example.com', roleId: roles.Owner }, admin.token);
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /only an Owner can make a member Owner/);
    assert.equal((await invite({ email: 'admin-invites-dev@example.com', roleId: roles.Developer }, admin.token)).status, 201);
    const owner = await signedIn(s, 'invite-owner@example.com', 'Owner');
    assert.equal((await invite({ email: 'would-be-owner@example.com', roleId: roles.Owner }, owner.token)).status, 201);
  });
});
