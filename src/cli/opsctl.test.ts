import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

/** Runs the real opsctl against the test server's stores, while the server runs. */
function opsctl(s: TestServer, args: string[]): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, OPS_DATA_DIR: s.dataDir };
  if (s.server.ctx.config.databaseUrl) env.OPS_DATABASE_URL = s.server.ctx.config.databaseUrl;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: Record<string, unknown> = {};
      try {
        json = stdout.trim() ? (JSON.parse(stdout) as Record<string, unknown>) : {};
      } catch {
        reject(new Error(`opsctl printed something other than one JSON object: ${stdout}`));
      }
      resolve({ code: code ?? -1, json, stderr });
    });
  });
}

describe('opsctl, while the server runs', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('org create, member add, token create: the new token works over HTTP', async () => {
    const org = await opsctl(s, ['org', 'create', '--name', 'Studio', '--plan', 'starter', '--owner-email', 'boss@studio.example', '--json']);
    assert.equal(org.code, 0, org.stderr);
    assert.deepEqual(Object.keys(org.json).sort(), ['org_id', 'project_id', 'user_id']);
    const member = await opsctl(s, ['member', 'add', '--org', String(org.json.org_id), '--email', 'dev@studio.example', '--role', 'Developer', '--json']);
    assert.equal(member.code, 0, member.stderr);
    const project = await opsctl(s, ['project', 'create', '--org', String(org.json.org_id), '--name', 'second', '--json']);
    assert.match(String(project.json.project_id), /^[0-9A-Z]{26}$/);
    const token = await opsctl(s, ['token', 'create', '--org', String(org.json.org_id), '--project', String(org.json.project_id), '--scopes', 'members:read,members:write', '--json']);
    assert.equal(token.code, 0, token.stderr);
    const list = await s.request('GET', `/orgs/${org.json.org_id}/members`, { token: String(token.json.token) });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.members.map((m: { email: string }) => m.email), ['dev@studio.example', 'boss@studio.example']);

    const transfer = await opsctl(s, ['owner', 'transfer', '--org', String(org.json.org_id), '--to', String(member.json.user_id), '--json']);
    assert.equal(transfer.code, 0, transfer.stderr);
    const viewer = list.body.members[0].role.id;
    // The former primary owner may now be demoted to the new owner's old role.
    const demote = await s.request('PATCH', `/orgs/${org.json.org_id}/members/${org.json.user_id}`, { token: String(token.json.token), json: { roleId: viewer } });
    assert.equal(demote.status, 200);

    const setPlan = await opsctl(s, ['org', 'set-plan', '--org', String(org.json.org_id), '--plan', 'pro', '--json']);
    assert.equal(setPlan.code, 0);

    const revoke = await opsctl(s, ['token', 'revoke', '--id', String(token.json.id), '--json']);
    assert.deepEqual(revoke.json, { id: token.json.id, revoked: true });
    // Revoked by another process: the server's token cache (OPS_AUTH_CACHE_MS, 1 s) lets it lapse.
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 3_000) {
      status = (await s.request('GET', `/orgs/${org.json.org_id}/members`, { token: String(token.json.token) })).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 401);
    assert.ok(Date.now() - revokedAt < 2_000, 'revocation took longer than the auth cache');
  });

  test('init on an installation that has organisations changes nothing and says so', async () => {
    const init = await opsctl(s, ['init', '--json']);
    assert.equal(init.code, 0);
    assert.equal(init.json.initialized, false);
    assert.equal(init.json.token, undefined);
  });

  test('bad arguments: clear errors, exit codes 1 (refused) and 2 (command line), one JSON object', async () => {
    const unknownPlan = await opsctl(s, ['org', 'create', '--name', 'x', '--plan', 'gold', '--owner-email', 'a@b.c', '--json']);
    assert.equal(unknownPlan.code, 1);
    assert.match(String((unknownPlan.json.error as { message: string }).message), /unknown plan "gold"/);
    const unknownScope = await opsctl(s, ['token', 'create', '--org', s.tenants.a.orgId, '--project', s.tenants.a.projectId, '--scopes', 'media:fly', '--json']);
    assert.equal(unknownScope.code, 1);
    const foreignProject = await opsctl(s, ['token', 'create', '--org', s.tenants.a.orgId, '--project', s.tenants.b.projectId, '--scopes', 'all', '--json']);
    assert.equal((foreignProject.json.error as { code: string }).code, 'not_found');
    const badFlag = await opsctl(s, ['org', 'create', '--colour', 'red']);
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /Unknown option '--colour'/);
  });
});
