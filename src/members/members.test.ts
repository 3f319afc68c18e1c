import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';

describe('members', () => {
  let s: TestServer;
  let orgId: string;
  let roles: Record<string, string>;
  const added: string[] = [];
  before(async () => {
    s = await startTestServer();
    orgId = s.tenants.a.orgId;
    for (let i = 0; i < 5; i++) {
      const { user_id } = await s.server.ctx.orgs.addMember({ orgId, email: `dev${i}@example.com`, name: `Dev ${i}`, role: 'Developer' });
      added.push(user_id);
    }
    const rows = await s.server.ctx.metadata.db.selectFrom('roles').select(['id', 'name']).where('org_id', '=', orgId).execute();
    roles = Object.fromEntries(rows.map((r) => [r.name, r.id]));
  });
  after(() => s.close());
  const members = (query = '', token?: string) => s.request('GET', `/orgs/${orgId}/members${query}`, { token });

  test('lists members newest first with every field of SPEC.md §2.10', async () => {
    const res = await members();
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.members.map((m: { id: string }) => m.id), [...added].reverse().concat(s.tenants.a.userId));
    const owner = res.body.members.at(-1);
    assert.deepEqual(Object.keys(owner).sort(), ['avatar', 'email', 'id', 'joinedAt', 'name', 'role']);
    assert.deepEqual(owner.role, { id: roles.Owner, name: 'Owner', isSystem: true });
    assert.equal(owner.email, 'owner-a@example.com');
    assert.equal(owner.avatar, '');
    assert.match(owner.joinedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(res.body.nextCursor, '');
    assert.equal('has_more' in res.body, false);
  });

  test('pages with nextCursor visit every member once', async () => {
    const seen: string[] = [];
    let cursor = '';
    do {
      const res = await members(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200);
      assert.ok(res.body.members.length <= 2);
      seen.push(...res.body.members.map((m: { id: string }) => m.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, [...added].reverse().concat(s.tenants.a.userId));
  });

  // A page is written once and its bytes answered again until anything is written
  // (Paginator.pageBytes): each size of page, and each page after a cursor, is its own answer.
  test('asked again, a page is the same JSON; other limits and the page after its cursor are their own', async () => {
    const first = await members('?limit=2');
    const again = await members('?limit=2');
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(first.text, JSON.stringify(first.body));
    const wider = await members('?limit=3');
    assert.deepEqual(wider.body.members.slice(0, 2), first.body.members);
    assert.equal(wider.body.members.length, 3);
    assert.notEqual(wider.body.nextCursor, first.body.nextCursor);
    const next = await members(`?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    assert.deepEqual(next.body.members, wider.body.members.slice(2).concat((await members('?limit=4')).body.members[3]));
    // Another token of the organisation (another project and mode): the same members, its cursor accepted.
    const other = await members('?limit=2', s.tenants.aTest.token);
    assert.deepEqual(other.body, first.body);
  });

  test('tenant matrix: another organisation gets 403 and its cursor 400; members are organisation-wide', async () => {
    const other = await members('', s.tenants.b.token);
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'forbidden');
    assert.equal((await s.request('PATCH', `/orgs/${orgId}/members/${added[0]}`, { token: s.tenants.b.token, json: { roleId: roles.Viewer } })).status, 403);
    assert.equal((await s.request('DELETE', `/orgs/${orgId}/members/${added[0]}`, { token: s.tenants.b.token })).status, 403);
    // Another project and the other mode of the same organisation see the same members (DECISIONS §4).
    const fromOtherProject = await members('', s.tenants.aOther.token);
    const fromTestMode = await members('', s.tenants.aTest.token);
    assert.equal(fromOtherProject.body.members.length, 6);
    assert.equal(fromTestMode.body.members.length, 6);
    // A cursor from org B's list is refused by org A's.
    await s.server.ctx.orgs.addMember({ orgId: s.tenants.b.orgId, email: 'b1@example.com', role: 'Viewer' });
    const bPage = await s.request('GET', `/orgs/${s.tenants.b.orgId}/members?limit=1`, { token: s.tenants.b.token });
    assert.ok(bPage.body.nextCursor);
    const foreign = await members(`?cursor=${encodeURIComponent(bPage.body.nextCursor)}`);
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 'bad_request');
  });

  test('PATCH changes a role; unknown or foreign roleId → 400; unknown member → 404; missing roleId → 400', async () => {
    const path = `/orgs/${orgId}/members/${added[0]}`;
    assert.deepEqual((await s.request('PATCH', path, { json: { roleId: roles.Viewer } })).body, { ok: true });
    const listed = (await members()).body.members.find((m: { id: string }) => m.id === added[0]);
    assert.equal(listed.role.name, 'Viewer');
    const bRole = await s.server.ctx.metadata.db.selectFrom('roles').select('id').where('org_id', '=', s.tenants.b.orgId).executeTakeFirstOrThrow();
    for (const roleId of ['rol_nope', bRole.id]) {
      const res = await s.request('PATCH', path, { json: { roleId } });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'bad_request');
    }
    assert.equal((await s.request('PATCH', path, { json: {} })).status, 400);
    const missing = await s.request('PATCH', `/orgs/${orgId}/members/usr_unknown`, { json: { roleId: roles.Viewer } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    // A member of org B is not a member of org A.
    assert.equal((await s.request('PATCH', `/orgs/${orgId}/members/${s.tenants.b.userId}`, { json: { roleId: roles.Viewer } })).status, 404);
  });

  test('the primary owner and the last Owner cannot be demoted or removed: 409 conflict', async () => {
    const owner = `/orgs/${orgId}/members/${s.tenants.a.userId}`;
    for (const res of [await s.request('PATCH', owner, { json: { roleId: roles.Admin } }), await s.request('DELETE', owner)]) {
      assert.equal(res.status, 409);
      assert.equal(res.body.error.code, 'conflict');
      assert.match(res.body.error.message, /primary owner/);
    }
    // A second Owner may be demoted while the primary owner remains an Owner…
    const second = `/orgs/${orgId}/members/${added[1]}`;
    assert.equal((await s.request('PATCH', second, { json: { roleId: roles.Owner } })).status, 200);
    assert.equal((await s.request('PATCH', second, { json: { roleId: roles.Developer } })).status, 200);
    // …and after a transfer, the former primary owner may be demoted, but the last Owner not.
    await s.server.ctx.orgs.transferOwnership(orgId, added[1]!);
    assert.equal((await s.request('PATCH', owner, { json: { roleId: roles.Admin } })).status, 200);
    const last = await s.request('PATCH', second, { json: { roleId: roles.Viewer } });
    assert.equal(last.status, 409);
    await s.server.ctx.orgs.transferOwnership(orgId, s.tenants.a.userId);
  });

  test('two concurrent demotions of the only two Owners: at most one succeeds', async () => {
    const x = added[2]!;
    const y = added[3]!;
    await s.server.ctx.orgs.transferOwnership(orgId, x);
    // Now x is primary; make y Owner, make the original owner non-Owner, then race y vs a demotion of x's peer.
    await s.request('PATCH', `/orgs/${orgId}/members/${y}`, { json: { roleId: roles.Owner } });
    await s.request('PATCH', `/orgs/${orgId}/members/${s.tenants.a.userId}`, { json: { roleId: roles.Admin } });
    await s.server.ctx.orgs.transferOwnership(orgId, y);
    // Owners now: x and y (y primary). Demoting x and removing x concurrently, plus demoting y, must leave an Owner.
    const results = await Promise.all([
      s.request('PATCH', `/orgs/${orgId}/members/${x}`, { json: { roleId: roles.Viewer } }),
      s.request('PATCH', `/orgs/${orgId}/members/${y}`, { json: { roleId: roles.Viewer } }),
    ]);
    const owners = (await members('?limit=100')).body.members.filter((m: { role: { name: string } }) => m.role.name === 'Owner');
    assert.ok(owners.length >= 1, `no Owner left: ${results.map((r) => r.status)}`);
    assert.equal(results[1]!.status, 409, 'the primary owner was demoted');
    await s.server.ctx.orgs.transferOwnership(orgId, s.tenants.a.userId);
  });

  test('DELETE removes a member (gone from the list); a second DELETE → 404', async () => {
    const path = `/orgs/${orgId}/members/${added[4]}`;
    assert.deepEqual((await s.request('DELETE', path)).body, { ok: true });
    assert.ok(!(await members('?limit=100')).body.members.some((m: { id: string }) => m.id === added[4]));
    const again = await s.request('DELETE', path);
    assert.equal(again.status, 404);
  });

  test('scopes: listing needs members:read, changes need members:write', async () => {
    const readOnly = await s.token(s.tenants.a, ['members:read']);
    assert.equal((await members('', readOnly)).status, 200);
    const res = await s.request('DELETE', `/orgs/${orgId}/members/${added[0]}`, { token: readOnly });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.required_scope, 'members:write');
    const noRead = await s.token(s.tenants.a, ['members:write']);
    assert.equal((await members('', noRead)).body.error.required_scope, 'members:read');
  });

  test('GET /orgs/{orgId}/roles lists the system roles (the roleIds PATCH takes); another org → 403; needs members:read', async () => {
    const res = await s.request('GET', `/orgs/${orgId}/roles`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['roles']);
    assert.deepEqual(res.body.roles, ['Owner', 'Admin', 'Developer', 'Viewer'].map((name) => ({ id: roles[name], name, isSystem: true })));
    // The same shape as a member's role, and usable as PATCH's roleId.
    const owner = (await members('?limit=100')).body.members.find((m: { id: string }) => m.id === s.tenants.a.userId);
    assert.ok(res.body.roles.some((r: unknown) => JSON.stringify(r) === JSON.stringify(owner.role)));
    const viewer = res.body.roles.find((r: { name: string }) => r.name === 'Viewer');
    assert.equal((await s.request('PATCH', `/orgs/${orgId}/members/${added[0]}`, { json: { roleId: viewer.id } })).status, 200);
    // Organisation-wide: any project or mode of the organisation; another organisation's token is refused.
    assert.deepEqual((await s.request('GET', `/orgs/${orgId}/roles`, { token: s.tenants.aTest.token })).body, res.body);
    const other = await s.request('GET', `/orgs/${orgId}/roles`, { token: s.tenants.b.token });
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'forbidden');
    const bRoles = await s.request('GET', `/orgs/${s.tenants.b.orgId}/roles`, { token: s.tenants.b.token });
    assert.equal(bRoles.status, 200);
    assert.ok(bRoles.body.roles.every((r: { id: string }) => !Object.values(roles).includes(r.id)));
    const noRead = await s.token(s.tenants.a, ['members:write']);
    const refused = await s.request('GET', `/orgs/${orgId}/roles`, { token: noRead });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.required_scope, 'members:read');
    assert.equal((await s.request('GET', `/orgs/${orgId}/roles`, { token: null })).status, 401);
    // Documented with the members endpoints.
    const doc = (await s.request('GET', '/openapi.json')).body;
    const op = doc.paths['/v1/orgs/{orgId}/roles'].get;
    assert.deepEqual(op.tags, ['members']);
    assert.equal(op['x-required-scope'], 'members:read');
    assert.ok(op.summary);
  });

  // The list is served from ReadMostlyCache on SQLite: a change by another process (opsctl beside
  // the server, another server on the same file) must show in the very next answer all the same.
  test("another process's changes show in the next list at once", async () => {
    const before = (await members('?limit=100')).body.members;
    assert.deepEqual((await members('?limit=100')).body.members, before);
    const cli = await createContext(s.server.ctx.config, systemClock);
    try {
      const { user_id } = await cli.orgs.addMember({ orgId, email: 'beside@example.com', role: 'Viewer' });
      const added = (await members('?limit=100')).body.members;
      assert.equal(added.length, before.length + 1);
      assert.equal(added[0].id, user_id);
      await cli.metadata.db.updateTable('users').set({ name: 'Renamed beside' }).where('id', '=', user_id).execute();
      assert.equal((await members('?limit=1')).body.members[0].name, 'Renamed beside');
      await cli.members.remove(orgId, user_id);
      assert.deepEqual((await members('?limit=100')).body.members, before);
    } finally {
      await cli.close();
    }
  });
});
