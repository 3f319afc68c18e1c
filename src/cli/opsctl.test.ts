import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { commands, extraCommands } from './commands.js';
import { commandHelp, usageLine } from './help.js';
import { png } from '../test-support/media/test-files.js';
import { opsctl, opsctlProcess } from '../test-support/opsctl.js';


const onPostgres = Boolean(process.env.OPS_TEST_DATABASE_URL);

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
    assert.deepEqual(revoke.json, { id: token.json.id, token_id: token.json.id, revoked: true });
    // Revoked by another process. On SQLite the server's token cache is checked against the
    // database's commit counter: the very next request is refused. On PostgreSQL (other hosts
    // write unseen) the cache's OPS_AUTH_CACHE_MS (1 s) lets it lapse.
    const revokedAt = Date.now();
    let status = (await s.request('GET', `/orgs/${org.json.org_id}/members`, { token: String(token.json.token) })).status;
    if (onPostgres) {
      while (status !== 401 && Date.now() - revokedAt < 3_000) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await s.request('GET', `/orgs/${org.json.org_id}/members`, { token: String(token.json.token) })).status;
      }
      assert.ok(Date.now() - revokedAt < 2_000, 'revocation took longer than the auth cache');
    }
    assert.equal(status, 401);
  });

  test('init on an installation that has organisations changes nothing and says so', async () => {
    const init = await opsctl(s, ['init', '--json']);
    assert.equal(init.code, 0);
    assert.equal(init.json.initialized, false);
    assert.equal(init.json.token, undefined);
  });

  test('bad arguments: clear errors, exit codes 1 (refused) and 2 (command line), one JSON object', async () => {
    // Real processes (exit codes as a shell sees them), started together.
    const [unknownPlan, unknownScope, foreignProject, badFlag, badBucket, badWorkers] = await Promise.all([
      opsctlProcess(s, ['org', 'create', '--name', 'x', '--plan', 'gold', '--owner-email', 'a@b.c', '--json']),
      opsctlProcess(s, ['token', 'create', '--org', s.tenants.a.orgId, '--project', s.tenants.a.projectId, '--scopes', 'media:fly', '--json']),
      opsctlProcess(s, ['token', 'create', '--org', s.tenants.a.orgId, '--project', s.tenants.b.projectId, '--scopes', 'all', '--json']),
      opsctlProcess(s, ['org', 'create', '--colour', 'red']),
      // Configuration only a store can check (an s3:// URL's bucket) and a bad --workers: exit 2, naming it.
      opsctlProcess(s, ['serve'], { OPS_PORT: '0', OPS_CDN_PORT: '0', OPS_BLOB_URL: 's3://Not_A_Bucket/media' }),
      opsctlProcess(s, ['serve', '--workers', 'many']),
    ]);
    assert.equal(unknownPlan.code, 1);
    assert.match(String((unknownPlan.json.error as { message: string }).message), /unknown plan "gold"/);
    assert.equal(unknownScope.code, 1);
    assert.equal((foreignProject.json.error as { code: string }).code, 'not_found');
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /Unknown option '--colour'/);
    assert.equal(badBucket.code, 2);
    assert.match(badBucket.stderr, /OPS_BLOB_URL: "Not_A_Bucket" is not a valid bucket name/);
    assert.equal(badWorkers.code, 2);
    assert.match(badWorkers.stderr, /--workers must be a whole number from 1 to 256/);
  });

  // Help at every level.
  test('--help, <cmd> --help and <cmd> <sub> --help describe every command and option and exit 0', async () => {
    const all = [...commands, ...extraCommands];
    // Help needs no valid configuration: it is what someone reads when theirs is wrong.
    const [top, tokenCreate, tokenGroup, helpMemberList, serve, bareGroup] = await Promise.all([
      opsctl(s, ['--help'], { OPS_PORT: 'not-a-port' }),
      opsctl(s, ['token', 'create', '--help']),
      opsctl(s, ['token', '--help']),
      opsctl(s, ['help', 'member', 'list']),
      // Before, `serve --help` started a server.
      opsctl(s, ['serve', '-h']),
      opsctl(s, ['token']),
    ]);
    for (const run of [top, tokenCreate, tokenGroup, helpMemberList, serve]) {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
    }
    // The overview names every command with a summary and the usage line of each, so every option.
    assert.match(top.stdout, /opsctl serve/);
    for (const command of all) {
      assert.ok(command.summary.length > 10, `${command.name} has no summary`);
      const line = top.stdout.split('\n').find((l) => l.includes(`opsctl ${command.name} `) || l.endsWith(`opsctl ${command.name}`));
      assert.ok(line, `--help does not list ${command.name}`);
      for (const option of Object.keys(command.options)) assert.ok(line.includes(`--${option}`), `--help omits ${command.name} --${option}`);
      assert.ok(top.stdout.includes(command.summary), `--help omits the summary of ${command.name}`);
      // Each command's own help (what `opsctl <command> --help` prints) describes each option.
      const own = commandHelp(command);
      assert.ok(own.startsWith(`usage: ${usageLine(command)}\n`));
      for (const [option, spec] of Object.entries(command.options)) {
        assert.ok(spec.description.length > 3, `${command.name} --${option} is not described`);
        assert.ok(own.split('\n').some((l) => l.startsWith(`  --${option}`) && l.includes(spec.description)), `${command.name} --help omits --${option}`);
      }
    }
    // A command's own help: usage, summary, every option with its description.
    const spec = all.find((c) => c.name === 'token create')!;
    assert.match(tokenCreate.stdout, /^usage: opsctl token create --org ID --project ID --scopes /);
    assert.ok(tokenCreate.stdout.includes(spec.summary));
    const lines = tokenCreate.stdout.split('\n');
    for (const [option, o] of Object.entries(spec.options)) assert.ok(lines.some((l) => l.startsWith(`  --${option} `) && l.includes(o.description)), `--${option}`);
    assert.ok(lines.some((l) => l.startsWith('  --json ')));
    assert.match(commandHelp(all.find((c) => c.name === 'whoami')!), /^usage: opsctl whoami --token TOKEN/);
    assert.match(helpMemberList.stdout, /^usage: opsctl member list --org ID/);
    assert.match(serve.stdout, /^usage: opsctl serve/);
    // A group lists its subcommands: with --help on stdout (0), without one on stderr (2).
    for (const name of ['token create', 'token revoke', 'token list']) assert.ok(tokenGroup.stdout.includes(`opsctl ${name}`));
    assert.ok(!tokenGroup.stdout.includes('opsctl org create'));
    assert.equal(bareGroup.code, 2);
    assert.match(bareGroup.stderr, /opsctl token create/);
  });

  test('org, project, token, member and role list: one JSON object with --json, a table without', async () => {
    const ctx = s.server.ctx;
    const org = await ctx.orgs.createOrg({ name: 'Listing Ltd', plan: 'starter', ownerEmail: 'boss@listing.example', ownerName: 'Boss' });
    await ctx.orgs.addMember({ orgId: org.org_id, email: 'dev@listing.example', name: 'Dev', role: 'Developer' });
    const second = await ctx.orgs.createProject(org.org_id, 'tools');
    const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
    const kept = await ctx.tokens.create({ tenant, name: 'kept', scopes: ['members:read'], expiresAt: null });
    const other = await ctx.tokens.create({ tenant: { ...tenant, projectId: second.project_id, mode: 'test' }, name: 'other', scopes: ['media:read'], expiresAt: null });
    const gone = await ctx.tokens.create({ tenant, name: 'gone', scopes: ['media:read'], expiresAt: null });
    await ctx.tokens.revokeById(gone.id);
    const [orgs, projects, allProjects, tokens, projectTokens, members, roles, orgTable, memberTable, roleTable, tokenTable, noOrg, unknownOrg] = await Promise.all([
      opsctl(s, ['org', 'list', '--json']),
      opsctl(s, ['project', 'list', '--org', org.org_id, '--json']),
      opsctl(s, ['project', 'list', '--json']),
      opsctl(s, ['token', 'list', '--org', org.org_id, '--json']),
      opsctl(s, ['token', 'list', '--project', second.project_id, '--json']),
      opsctl(s, ['member', 'list', '--org', org.org_id, '--json']),
      opsctl(s, ['role', 'list', '--org', org.org_id, '--json']),
      opsctl(s, ['org', 'list']),
      opsctl(s, ['member', 'list', '--org', org.org_id]),
      opsctl(s, ['role', 'list', '--org', org.org_id]),
      opsctl(s, ['token', 'list', '--org', org.org_id]),
      opsctl(s, ['member', 'list', '--json']),
      opsctl(s, ['role', 'list', '--org', '01ZZZZZZZZZZZZZZZZZZZZZZZZ', '--json']),
    ]);
    for (const run of [orgs, projects, allProjects, tokens, projectTokens, members, roles, orgTable, memberTable, roleTable, tokenTable]) assert.equal(run.code, 0, run.stderr);

    assert.deepEqual(Object.keys(orgs.json), ['orgs']);
    const listed = (orgs.json.orgs as Array<Record<string, unknown>>).find((o) => o.id === org.org_id);
    assert.deepEqual(Object.keys(listed!).sort(), ['created_at', 'id', 'name', 'plan', 'primary_owner_id']);
    assert.equal(listed!.plan, 'starter');
    assert.equal(listed!.primary_owner_id, org.user_id);
    assert.ok((orgs.json.orgs as Array<{ id: string }>).some((o) => o.id === s.tenants.b.orgId));

    assert.deepEqual(Object.keys(projects.json), ['projects']);
    assert.deepEqual((projects.json.projects as Array<{ id: string }>).map((p) => p.id), [org.project_id, second.project_id]);
    assert.deepEqual(Object.keys((projects.json.projects as object[])[0]!).sort(), ['created_at', 'id', 'name', 'org_id']);
    assert.ok((allProjects.json.projects as Array<{ id: string }>).some((p) => p.id === s.tenants.b.projectId));

    // Every project and mode of the organisation, newest first; revoked tokens and secrets left out.
    const listedTokens = tokens.json.tokens as Array<Record<string, unknown>>;
    assert.deepEqual(listedTokens.map((t) => t.id), [other.id, kept.id]);
    assert.deepEqual(Object.keys(listedTokens[0]!).sort(), ['created_at', 'created_by_user_id', 'expires_at', 'id', 'last_four', 'last_used_at', 'mode', 'name', 'org_id', 'project_id', 'scopes']);
    assert.deepEqual(listedTokens[0]!.scopes, ['media:read']);
    assert.equal(listedTokens[0]!.mode, 'test');
    assert.ok(!tokens.stdout.includes(kept.token) && !tokens.stdout.includes(kept.token.slice(9)));
    assert.deepEqual((projectTokens.json.tokens as Array<{ id: string }>).map((t) => t.id), [other.id]);

    // Members and roles exactly as the API shows them.
    const api = await s.token(tenant, ['members:read']);
    assert.deepEqual(members.json, { members: (await s.request('GET', `/orgs/${org.org_id}/members?limit=100`, { token: api })).body.members });
    assert.deepEqual(roles.json, (await s.request('GET', `/orgs/${org.org_id}/roles`, { token: api })).body);

    // Tables: a header line, then one line per row.
    assert.match(orgTable.stdout.split('\n')[0]!, /^ID +NAME +PLAN/);
    assert.match(orgTable.stdout, new RegExp(`^${org.org_id} +Listing Ltd +starter`, 'm'));
    assert.match(memberTable.stdout.split('\n')[0]!, /^ID +NAME +EMAIL +ROLE +JOINED/);
    assert.match(memberTable.stdout, /dev@listing\.example +Developer/);
    assert.equal(memberTable.stdout.trim().split('\n').length, 3);
    assert.match(roleTable.stdout, /^rol_\S+ +Owner +yes$/m);
    assert.match(tokenTable.stdout, new RegExp(`^${other.id} +other +test`, 'm'));

    assert.equal(noOrg.code, 2, 'a missing required option is a command-line error');
    assert.match(noOrg.stderr, /--org is required/);
    assert.equal(unknownOrg.code, 1);
    assert.equal((unknownOrg.json.error as { code: string }).code, 'not_found');
  });

  test('whoami names the organisation, project, scopes and mode of a token, never its secret; invalid or revoked → exit 1', async () => {
    const created = await opsctl(s, ['token', 'create', '--org', s.tenants.a.orgId, '--project', s.tenants.a.projectId, '--scopes', 'media:read,logs:read', '--mode', 'test', '--name', 'ci', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const token = String(created.json.token);
    const [json, text, missing, garbage, unknown] = await Promise.all([
      opsctl(s, ['whoami', '--token', token, '--json']),
      opsctl(s, ['whoami', '--token', token]),
      opsctl(s, ['whoami', '--json']),
      opsctl(s, ['whoami', '--token', 'nonsense', '--json']),
      opsctl(s, ['whoami', '--token', `ops_live_${'x'.repeat(43)}`]),
    ]);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(json.json, {
      token_id: created.json.id,
      name: 'ci',
      org_id: s.tenants.a.orgId,
      org_name: 'Org A',
      plan: 'pro',
      project_id: s.tenants.a.projectId,
      project_name: 'default',
      mode: 'test',
      scopes: ['media:read', 'logs:read'],
      last_four: token.slice(-4),
      expires_at: null,
      last_used_at: null,
      created_at: json.json.created_at,
      created_by_user_id: null,
    });
    assert.equal(text.code, 0);
    assert.match(text.stdout, new RegExp(`^token_id: ${created.json.id}$`, 'm'));
    assert.match(text.stdout, /^scopes: media:read, logs:read$/m);
    for (const run of [json, text]) assert.ok(!run.stdout.includes(token.slice(9)) && !run.stderr.includes(token.slice(9)), 'whoami printed the secret');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--token is required/);
    assert.equal(garbage.code, 1);
    assert.equal((garbage.json.error as { code: string }).code, 'unauthorized');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /opsctl: /);

    await opsctl(s, ['token', 'revoke', '--id', String(created.json.id)]);
    const revoked = await opsctl(s, ['whoami', '--token', token, '--json']);
    assert.equal(revoked.code, 1);
    assert.deepEqual(revoked.json.error, { code: 'unauthorized', message: 'this token has been revoked' });
  });

  test('token create and init name the token id token_id (token create keeps id, DECISIONS §3)', async () => {
    const created = await opsctl(s, ['token', 'create', '--org', s.tenants.a.orgId, '--project', s.tenants.a.projectId, '--scopes', 'all', '--json']);
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(Object.keys(created.json).sort(), ['id', 'token', 'token_id']);
    assert.equal(created.json.token_id, created.json.id);
    assert.match(String(created.json.token_id), /^tok_[0-9A-Z]{26}$/);

    // init needs an empty installation: a data directory of its own (embedded SQLite).
    const empty = { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'opsctl-init-')) };
    try {
      const init = await opsctlProcess(empty, ['init', '--json']);
      assert.equal(init.code, 0, init.stderr);
      assert.deepEqual(Object.keys(init.json).sort(), ['email', 'initialized', 'org_id', 'project_id', 'set_password_expires_at', 'set_password_url', 'token', 'token_id', 'user_id']);
      assert.equal(init.json.email, 'owner@localhost');
      assert.match(String(init.json.set_password_url), /^http:\/\/localhost:8080\/dashboard\/set-password#[A-Za-z0-9_-]{43}$/);
      const [me, again] = await Promise.all([opsctlProcess(empty, ['whoami', '--token', String(init.json.token), '--json']), opsctlProcess(empty, ['init', '--json'])]);
      assert.equal(me.json.token_id, init.json.token_id);
      assert.equal(me.json.org_id, init.json.org_id);
      assert.equal(again.json.initialized, false);
      assert.equal(again.json.token_id, undefined);
      assert.equal(again.json.email, 'owner@localhost');
    } finally {
      fs.rmSync(empty.dataDir, { recursive: true, force: true });
    }
  });

  test('init --email chooses the owner who signs in, and the human output names it beside the link', async () => {
    const empty = { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'opsctl-init-')) };
    try {
      const bad = await opsctl(empty, ['init', '--email', 'not-an-address', '--json']);
      assert.equal(bad.code, 1);
      const error = bad.json.error as { code: string; message: string };
      assert.equal(error.code, 'bad_request');
      assert.match(error.message, /not an e-mail address/);

      const init = await opsctl(empty, ['init', '--email', ' Studio.Lead@Example.com ']);
      assert.equal(init.code, 0, init.stderr);
      assert.match(init.stdout, /^email: studio\.lead@example\.com$/m);
      assert.match(init.stdout, /^set_password_url: http:\/\/localhost:8080\/dashboard\/set-password#/m);

      // The owner set from the link signs in with that e-mail.
      const link = /^set_password_url: \S+#(\S+)$/m.exec(init.stdout)![1]!;
      const again = await opsctl(empty, ['init', '--email', 'other@example.com', '--json']);
      assert.equal(again.json.initialized, false);
      assert.equal(again.json.email, 'studio.lead@example.com');
      const members = await opsctl(empty, ['member', 'list', '--org', String(again.json.org_id), '--json']);
      assert.deepEqual((members.json.members as Array<{ email: string }>).map((m) => m.email), ['studio.lead@example.com']);
      assert.equal(link.length, 43);
    } finally {
      fs.rmSync(empty.dataDir, { recursive: true, force: true });
    }
  });

  test('member add and user reset-password print one-time dashboard links that set the password', async () => {
    const env = { OPS_PUBLIC_URL: 'https://ops.example.test' };
    const added = await opsctl(s, ['member', 'add', '--org', s.tenants.a.orgId, '--email', 'linked@example.com', '--role', 'Viewer', '--json'], env);
    assert.equal(added.code, 0, added.stderr);
    assert.deepEqual(Object.keys(added.json).sort(), ['set_password_expires_at', 'set_password_url', 'user_id']);
    const url = String(added.json.set_password_url);
    assert.match(url, /^https:\/\/ops\.example\.test\/dashboard\/set-password#[A-Za-z0-9_-]{43}$/);
    const origin = { origin: s.apiUrl };
    const set = (link: string, password: string) => s.request('POST', `${s.apiUrl}/dashboard/password`, { token: null, headers: origin, json: { link_token: link.split('#')[1], password } });

    // A new link replaces the first, which stops working.
    const reset = await opsctl(s, ['user', 'reset-password', '--email', 'Linked@Example.com', '--json']);
    assert.equal(reset.code, 0, reset.stderr);
    assert.deepEqual(Object.keys(reset.json).sort(), ['email', 'set_password_expires_at', 'set_password_url', 'user_id']);
    assert.equal(reset.json.user_id, added.json.user_id);
    assert.equal((await set(url, 'correct horse battery')).status, 400);
    assert.equal((await set(String(reset.json.set_password_url), 'correct horse battery')).status, 200);
    const signIn = await s.request('POST', `${s.apiUrl}/dashboard/session`, { token: null, headers: origin, json: { email: 'linked@example.com', password: 'correct horse battery' } });
    assert.equal(signIn.status, 200);

    // A member who already has a password gets no link; an unknown e-mail is not_found.
    const again = await opsctl(s, ['member', 'add', '--org', s.tenants.b.orgId, '--email', 'linked@example.com', '--role', 'Viewer', '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json.set_password_url, null);
    const unknown = await opsctl(s, ['user', 'reset-password', '--email', 'nobody@example.com', '--json']);
    assert.equal(unknown.code, 1);
    assert.equal((unknown.json.error as { code: string }).code, 'not_found');
  });

  test('media restore prints delivery URLs under the configured OPS_CDN_URL or OPS_CDN_PORT', async () => {
    const upload = async () => {
      const res = await s.request('POST', '/media/base64', { json: { filename: 'p.png', content_type: 'image/png', data: png().toString('base64') } });
      assert.equal(res.status, 201);
      assert.equal((await s.request('DELETE', `/media/${res.body.id}`)).status, 200);
      return res.body as { id: string; key: string; url: string };
    };
    const [viaUrl, viaPort, unknown] = [await upload(), await upload(), await upload()];
    // One after the other: each in-process run opens its own SQLite connection, and a restore is
    // a transaction (the file and its audit entry): a second connection's synchronous busy wait
    // in this same process would block the event loop the first one needs to commit.
    const byUrl = await opsctl(s, ['media', 'restore', '--id', viaUrl.id, '--json'], { OPS_CDN_URL: 'https://cdn.example.test/files', OPS_CDN_PORT: undefined });
    const byPort = await opsctl(s, ['media', 'restore', '--id', viaPort.id, '--json'], { OPS_CDN_URL: undefined, OPS_CDN_PORT: '9123' });
    const byNothing = await opsctl(s, ['media', 'restore', '--id', unknown.id, '--json'], { OPS_CDN_URL: undefined, OPS_CDN_PORT: '0' });
    assert.equal(byUrl.code, 0, byUrl.stderr);
    assert.equal(byUrl.json.url, `https://cdn.example.test/files/${viaUrl.url.split('/').slice(3).join('/')}`);
    assert.equal(byPort.json.url, `http://localhost:9123/${viaPort.url.split('/').slice(3).join('/')}`);
    // A delivery listener on a port picked at start-up (0) is unknown to opsctl: it says so.
    assert.equal(byNothing.code, 0, byNothing.stderr);
    assert.match(byNothing.stderr, /OPS_CDN_URL/);
  });
});
