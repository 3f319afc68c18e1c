import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestResponse, type TestServer } from '../test-support/test-server.js';
import { opsctl } from '../test-support/opsctl.js';
import { Browser, password, signedIn } from '../test-support/dashboard/test-session.js';
import { dashboardService } from '../dashboard/capability.js';
import { operatorOrigin } from '../tenancy/origin.js';
import { png } from '../test-support/media/test-files.js';
import { AuditService } from './audit-service.js';

interface Entry {
  id: string;
  ts: string;
  action: string;
  actor: { type: string; id: string; name: string };
  target: { type: string; id: string };
  project_id?: string;
  mode?: string;
  request_id: string;
  ip: string;
  user_agent: string;
  outcome: string;
  details: Record<string, unknown>;
}

/** What a change through the API, the dashboard or opsctl should have left: one entry like this. */
interface Expected {
  action: string;
  targetId: string;
  requestId: string;
  actor: { type: string; id: string };
  outcome?: string;
}

const requestId = (res: TestResponse): string => {
  const id = res.headers.get('x-request-id');
  assert.ok(id, 'X-Request-Id');
  return id;
};

describe('audit log: one entry per change, with its actor, target and request', () => {
  let s: TestServer;
  /** Every secret the suite handed the server: none may appear in any entry. */
  const secrets: string[] = [password];
  let tokenA: { type: 'token'; id: string };
  let operator: { type: 'operator'; id: string };
  let ownerRoleIds: Record<string, string>;

  before(async () => {
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' }, monitors: { tickMs: 3_600_000 } });
    secrets.push(...Object.values(s.tenants).map((t) => t.token));
    tokenA = { type: 'token', id: (await s.server.ctx.tokens.whoami(s.tenants.a.token)).token_id };
    operator = { type: 'operator', id: operatorOrigin().actor.id };
    const roles = await s.request('GET', `/orgs/${s.tenants.a.orgId}/roles`);
    ownerRoleIds = Object.fromEntries((roles.body.roles as Array<{ id: string; name: string }>).map((r) => [r.name, r.id]));
  });
  after(() => s.close());

  const list = (query = '', token = s.tenants.a.token, orgId = s.tenants.a.orgId) => s.request('GET', `/orgs/${orgId}/audit${query}`, { token });

  /** Exactly one entry of the action about the target, with the actor and request id expected. */
  async function expectOne(expected: Expected): Promise<Entry> {
    const res = await list(`?action=${expected.action}&target_id=${encodeURIComponent(expected.targetId)}`);
    assert.equal(res.status, 200, res.text);
    const entries = res.body.entries as Entry[];
    assert.equal(entries.length, 1, `${expected.action} ${expected.targetId}: ${JSON.stringify(entries)}`);
    const entry = entries[0]!;
    assert.equal(entry.request_id, expected.requestId, `${expected.action}: request id`);
    assert.deepEqual({ type: entry.actor.type, id: entry.actor.id }, expected.actor, `${expected.action}: actor`);
    assert.equal(entry.target.id, expected.targetId);
    assert.equal(entry.outcome, expected.outcome ?? 'success');
    assert.match(entry.id, /^aud_[0-9A-Z]{26}$/);
    assert.match(entry.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    return entry;
  }

  const operatorChange = (action: string, targetId: string): Expected => ({ action, targetId, requestId: operatorOrigin().requestId, actor: operator });

  test('tokens: created and revoked through the API and opsctl', async () => {
    const created = await s.request('POST', '/tokens', { json: { name: 'ci', scopes: ['media:read'] }, headers: { 'user-agent': 'audit-test/1' } });
    assert.equal(created.status, 201, created.text);
    secrets.push(created.body.token);
    const entry = await expectOne({ action: 'token.create', targetId: created.body.id, requestId: requestId(created), actor: tokenA });
    assert.equal(entry.user_agent, 'audit-test/1');
    assert.equal(entry.ip, '127.0.0.1');
    assert.deepEqual([entry.project_id, entry.mode], [s.tenants.a.projectId, 'live']);
    assert.deepEqual(entry.details, { name: 'ci', scopes: ['media:read'], expires_at: null });

    const revoked = await s.request('DELETE', `/tokens/${created.body.id}`);
    assert.equal(revoked.status, 200, revoked.text);
    await expectOne({ action: 'token.revoke', targetId: created.body.id, requestId: requestId(revoked), actor: tokenA });

    const { projectId, orgId } = s.tenants.a;
    const cli = await opsctl(s, ['token', 'create', '--org', orgId, '--project', projectId, '--scopes', 'logs:read', '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    secrets.push(cli.json.token);
    await expectOne(operatorChange('token.create', cli.json.id));
    const cliRevoke = await opsctl(s, ['token', 'revoke', '--id', cli.json.id, '--json']);
    assert.equal(cliRevoke.code, 0, cliRevoke.stderr);
    await expectOne(operatorChange('token.revoke', cli.json.id));
  });

  test('members: invited, re-roled and removed through the API, by a token and by a signed-in Admin', async () => {
    const invited = await s.request('POST', `/orgs/${s.tenants.a.orgId}/members`, { json: { email: 'new@example.com', roleId: ownerRoleIds.Viewer } });
    assert.equal(invited.status, 201, invited.text);
    const userId = invited.body.id as string;
    const entry = await expectOne({ action: 'member.invite', targetId: userId, requestId: requestId(invited), actor: tokenA });
    assert.deepEqual(entry.details, { email: 'new@example.com', role: 'Viewer' });

    const admin = await signedIn(s, 'admin@example.com', 'Admin');
    secrets.push(admin.token);
    const reroled = await s.request('PATCH', `/orgs/${s.tenants.a.orgId}/members/${userId}`, { token: admin.token, json: { roleId: ownerRoleIds.Developer } });
    assert.equal(reroled.status, 200, reroled.text);
    const change = await expectOne({ action: 'member.role_change', targetId: userId, requestId: requestId(reroled), actor: { type: 'user', id: admin.userId } });
    assert.deepEqual(change.details, { role: 'Developer', previous_role: 'Viewer' });
    assert.equal(change.actor.name, 'admin');

    const removed = await s.request('DELETE', `/orgs/${s.tenants.a.orgId}/members/${userId}`, { token: admin.token });
    assert.equal(removed.status, 200, removed.text);
    await expectOne({ action: 'member.remove', targetId: userId, requestId: requestId(removed), actor: { type: 'user', id: admin.userId } });

    const cli = await opsctl(s, ['member', 'add', '--org', s.tenants.a.orgId, '--email', 'cli@example.com', '--role', 'Viewer', '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    await expectOne(operatorChange('member.invite', cli.json.user_id));
  });

  test('sign-ins, refused ones (the e-mail given, never the password) and passwords set from a link', async () => {
    const { orgId } = s.tenants.a;
    const { user_id } = await s.server.ctx.orgs.addMember({ orgId, email: 'signer@example.com', role: 'Developer' });
    const { link_token } = await dashboardService(s.server.ctx).issuePasswordLink(user_id);
    secrets.push(link_token);
    const browser = new Browser(s);
    const set = await browser.request('POST', '/dashboard/password', { link_token, password });
    assert.equal(set.status, 200, set.text);
    await expectOne({ action: 'user.password_set', targetId: user_id, requestId: requestId(set), actor: { type: 'user', id: user_id } });

    const wrongPassword = 'not-the-password-7f3a9c';
    secrets.push(wrongPassword);
    const refused = await browser.signIn('Signer@example.com', wrongPassword);
    assert.equal(refused.status, 401);
    const failure = await expectOne({ action: 'user.sign_in', targetId: user_id, requestId: requestId(refused), actor: { type: 'user', id: user_id }, outcome: 'failure' });
    assert.deepEqual(failure.details, { email: 'signer@example.com', method: 'password' });

    const signIn = await browser.signIn('signer@example.com');
    assert.equal(signIn.status, 200, signIn.text);
    const success = await list(`?action=user.sign_in&target_id=${user_id}`);
    assert.deepEqual(
      (success.body.entries as Entry[]).map((e) => [e.outcome, e.request_id]),
      [
        ['success', requestId(signIn)],
        ['failure', requestId(refused)],
      ],
    );
    // The session's own short-lived tokens are sign-in machinery, not changes.
    const exchanged = await browser.token({ org_id: orgId, project_id: s.tenants.a.projectId });
    assert.equal(exchanged.status, 200);
    secrets.push(exchanged.body.token);
    assert.equal((await list(`?target_id=${exchanged.body.token_id}`)).body.entries.length, 0);
  });

  test('organisation and project changes made with opsctl: plan, project, primary owner', async () => {
    const { orgId } = s.tenants.a;
    const plan = await opsctl(s, ['org', 'set-plan', '--org', orgId, '--plan', 'enterprise', '--json']);
    assert.equal(plan.code, 0, plan.stderr);
    const entry = await expectOne(operatorChange('org.plan_change', orgId));
    assert.deepEqual(entry.details, { plan: 'enterprise', previous_plan: 'pro' });
    const project = await opsctl(s, ['project', 'create', '--org', orgId, '--name', 'third', '--json']);
    assert.equal(project.code, 0, project.stderr);
    await expectOne(operatorChange('project.create', project.json.project_id));
    const owner = await opsctl(s, ['owner', 'transfer', '--org', orgId, '--to', s.tenants.a.userId, '--json']);
    assert.equal(owner.code, 0, owner.stderr);
    await expectOne(operatorChange('org.owner_transfer', s.tenants.a.userId));

    const created = await opsctl(s, ['org', 'create', '--name', 'Org C', '--plan', 'free', '--owner-email', 'c@example.com', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const listed = await opsctl(s, ['audit', 'list', '--org', created.json.org_id, '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      listed.json.entries.map((e: Entry) => [e.action, e.target.id, e.actor.type]),
      [['org.create', created.json.org_id, 'operator']],
    );
  });

  test('datasets: created, changed and archived', async () => {
    const created = await s.request('POST', '/datasets', { json: { name: 'audited' } });
    assert.equal(created.status, 201, created.text);
    // The API names datasets by name; the entry names the dataset's id, which survives a rename.
    const { id } = await s.server.ctx.metadata.db.selectFrom('datasets').select('id').where('name', '=', 'audited').executeTakeFirstOrThrow();
    const entry = await expectOne({ action: 'dataset.create', targetId: id, requestId: requestId(created), actor: tokenA });
    assert.equal(entry.details.by_ingest, false);
    const changed = await s.request('PATCH', '/datasets/audited', { json: { name: 'audited2', retention_days: 3 } });
    assert.equal(changed.status, 200, changed.text);
    const update = await expectOne({ action: 'dataset.update', targetId: id, requestId: requestId(changed), actor: tokenA });
    assert.deepEqual(update.details, { name: 'audited2', previous_name: 'audited', retention_days: 3 });
    const archived = await s.request('DELETE', '/datasets/audited2');
    assert.equal(archived.status, 200, archived.text);
    await expectOne({ action: 'dataset.archive', targetId: id, requestId: requestId(archived), actor: tokenA });
  });

  test('files: deleted, restored through the API and opsctl, purged', async () => {
    const upload = await s.request('POST', '/media/base64', { json: { filename: 'p.png', content_type: 'image/png', data: png().toString('base64') } });
    assert.equal(upload.status, 201, upload.text);
    const id = upload.body.id as string;
    const deleted = await s.request('DELETE', `/media/${id}`);
    assert.equal(deleted.status, 200, deleted.text);
    await expectOne({ action: 'file.delete', targetId: id, requestId: requestId(deleted), actor: tokenA });
    const restored = await s.request('POST', `/media/${id}/restore`);
    assert.equal(restored.status, 200, restored.text);
    await expectOne({ action: 'file.restore', targetId: id, requestId: requestId(restored), actor: tokenA });
    const again = await s.request('POST', `/media/${id}/restore`);
    assert.equal(again.status, 200);
    assert.equal((await list(`?action=file.restore&target_id=${id}`)).body.entries.length, 1, 'restoring an active file changes nothing and records nothing');

    const second = await s.request('DELETE', `/media/${id}`);
    assert.equal(second.status, 200);
    const cli = await opsctl(s, ['media', 'restore', '--id', id, '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    const restores = (await list(`?action=file.restore&target_id=${id}`)).body.entries as Entry[];
    assert.deepEqual(restores.map((e) => e.actor.type), ['operator', 'token']);

    const third = await s.request('DELETE', `/media/${id}`);
    assert.equal(third.status, 200);
    s.clock.advance(31 * 86_400_000);
    try {
      assert.equal((await s.server.media.purge()).purged, 1);
    } finally {
      s.clock.advance(-31 * 86_400_000);
    }
    const purged = (await list(`?action=file.purge&target_id=${id}`)).body.entries as Entry[];
    assert.deepEqual(
      purged.map((e) => [e.actor.type, e.details.size]),
      [['operator', png().length]],
    );
  });

  test('monitors and channels: created, changed, deleted (never a channel URL or signing secret)', async () => {
    const url = 'http://127.0.0.1:9/hook?key=channel-url-secret-41c2';
    secrets.push(url, 'channel-url-secret-41c2');
    const channel = await s.request('POST', '/channels', { json: { name: 'hook', kind: 'webhook', url } });
    assert.equal(channel.status, 201, channel.text);
    secrets.push(channel.body.signing_secret);
    const channelId = channel.body.id as string;
    const created = await expectOne({ action: 'channel.create', targetId: channelId, requestId: requestId(channel), actor: tokenA });
    assert.deepEqual(created.details, { name: 'hook', kind: 'webhook' });
    const newUrl = 'http://127.0.0.1:9/other?key=second-url-secret-9d1e';
    secrets.push(newUrl, 'second-url-secret-9d1e');
    const changed = await s.request('PATCH', `/channels/${channelId}`, { json: { url: newUrl } });
    assert.equal(changed.status, 200, changed.text);
    const change = await expectOne({ action: 'channel.update', targetId: channelId, requestId: requestId(changed), actor: tokenA });
    assert.deepEqual(change.details, { name: 'hook', fields: ['url'] });

    const monitor = await s.request('POST', '/monitors', { json: { name: 'flags', kind: 'match', q: 'event:anticheat.flag', channel_ids: [channelId] } });
    assert.equal(monitor.status, 201, monitor.text);
    const monitorId = monitor.body.id as string;
    await expectOne({ action: 'monitor.create', targetId: monitorId, requestId: requestId(monitor), actor: tokenA });
    const renamed = await s.request('PATCH', `/monitors/${monitorId}`, { json: { name: 'flags2' } });
    assert.equal(renamed.status, 200, renamed.text);
    await expectOne({ action: 'monitor.update', targetId: monitorId, requestId: requestId(renamed), actor: tokenA });
    const removed = await s.request('DELETE', `/monitors/${monitorId}`);
    assert.equal(removed.status, 200, removed.text);
    await expectOne({ action: 'monitor.delete', targetId: monitorId, requestId: requestId(removed), actor: tokenA });
    const channelRemoved = await s.request('DELETE', `/channels/${channelId}`);
    assert.equal(channelRemoved.status, 200, channelRemoved.text);
    await expectOne({ action: 'channel.delete', targetId: channelId, requestId: requestId(channelRemoved), actor: tokenA });
  });

  test('a change that fails records nothing', async () => {
    const before = (await list('?limit=100')).body.entries.length as number;
    assert.equal((await s.request('DELETE', '/tokens/tok_01ARZ3NDEKTSV4RRFFQ69G5FAV')).status, 404);
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'default' } })).status, 409);
    assert.equal((await list('?limit=100')).body.entries.length, before);
  });

  test('audit:read: Owner and Admin read, a Developer and a Viewer get 403; another organisation is 403 and sees none of these entries', async () => {
    const developer = await signedIn(s, 'dev@example.com', 'Developer');
    secrets.push(developer.token);
    const refused = await list('', developer.token);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.required_scope, 'audit:read');
    const owner = await signedIn(s, 'owner2@example.com', 'Owner');
    secrets.push(owner.token);
    assert.equal((await list('', owner.token)).status, 200);
    const narrow = await s.token(s.tenants.a, ['members:read']);
    secrets.push(narrow);
    assert.equal((await list('', narrow)).status, 403);

    assert.equal((await list('', s.tenants.b.token)).status, 403, "org B's token on org A's log");
    const own = await list('?limit=100', s.tenants.b.token, s.tenants.b.orgId);
    assert.equal(own.status, 200);
    assert.ok((own.body.entries as Entry[]).every((e) => !JSON.stringify(e).includes(s.tenants.a.orgId)));
    const mine = await list('?limit=100');
    const bIds = new Set((own.body.entries as Entry[]).map((e) => e.id));
    assert.ok((mine.body.entries as Entry[]).every((e) => !bIds.has(e.id)));

    const doc = await s.request('GET', '/openapi.json', { token: null });
    assert.equal(doc.body.paths['/v1/orgs/{orgId}/audit'].get['x-required-scope'], 'audit:read');
  });

  test('pages newest first with signed cursors; filters actor, action, target_id, from, to; bad input is 400', async () => {
    const all = (await list('?limit=100')).body.entries as Entry[];
    assert.ok(all.length > 10);
    // Newest first; entries of one millisecond list by commit on SQLite, by id on PostgreSQL
    // (docs/audit.md, "Order and layout").
    for (let k = 1; k < all.length; k++) assert.ok(all[k - 1]!.ts >= all[k]!.ts, 'newest first');
    const seen: string[] = [];
    let cursor = '';
    do {
      const page = await list(`?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200, page.text);
      seen.push(...(page.body.entries as Entry[]).map((e) => e.id));
      cursor = page.body.next_cursor;
      assert.equal(page.body.has_more, cursor !== '');
    } while (cursor);
    assert.deepEqual(seen, all.map((e) => e.id));

    const byActor = (await list(`?actor=${tokenA.id}&limit=100`)).body.entries as Entry[];
    assert.ok(byActor.length > 0 && byActor.every((e) => e.actor.id === tokenA.id));
    const byAction = (await list('?action=token.create&limit=100')).body.entries as Entry[];
    assert.ok(byAction.length >= 2 && byAction.every((e) => e.action === 'token.create'));
    const middle = all[Math.floor(all.length / 2)]!;
    const from = (await list(`?from=${middle.ts}&limit=100`)).body.entries as Entry[];
    assert.ok(from.every((e) => e.ts >= middle.ts) && from.some((e) => e.id === middle.id));
    const to = (await list(`?to=${middle.ts}&limit=100`)).body.entries as Entry[];
    assert.ok(to.every((e) => e.ts < middle.ts));
    assert.equal(from.length + to.length, all.length);

    const filtered = await list('?action=token.create&limit=1');
    assert.ok(filtered.body.next_cursor);
    assert.equal((await list(`?limit=1&cursor=${filtered.body.next_cursor}`)).status, 400, "a filtered list's cursor does not continue another");
    assert.equal((await list(`?limit=1&cursor=${filtered.body.next_cursor}`, s.tenants.b.token, s.tenants.b.orgId)).status, 400, "nor another organisation's");
    for (const bad of ['?limit=0', '?limit=101', '?action=token.steal', '?from=yesterday', `?from=${middle.ts}&to=${middle.ts}`, '?cursor=abc']) {
      const res = await list(bad);
      assert.equal(res.status, 400, `${bad}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request');
    }
  });

  test('no entry made by this suite holds any secret it used', async () => {
    const rows = await s.server.ctx.metadata.db.selectFrom('audit_entries').selectAll().execute();
    assert.ok(rows.length > 20);
    const text = rows.map((r) => JSON.stringify(r));
    for (const secret of secrets) {
      assert.ok(secret && secret.length >= 8, 'a secret of the suite');
      const found = text.find((t) => t.includes(secret));
      assert.equal(found, undefined, `secret ${secret.slice(0, 6)}… in an entry`);
    }
  });

  test('entries older than 400 days are purged, younger ones kept', async () => {
    const service = new AuditService(s.server.ctx.metadata.db, s.clock);
    const before = (await list('?limit=100')).body.entries.length as number;
    s.clock.advance(399 * 86_400_000);
    try {
      assert.deepEqual(await service.purge(), { entries: 0 });
      // Past 400 days of every entry (the file purge's is 31 days ahead).
      s.clock.advance(40 * 86_400_000);
      const purged = await service.purge();
      assert.ok(purged.entries >= before, JSON.stringify(purged));
    } finally {
      s.clock.offsetMs = 0;
    }
    assert.equal((await list()).body.entries.length, 0);
  });
});
