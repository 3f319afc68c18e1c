// tsx bench/token-create.ts — the CPU of one token creation in process (the token service on a
// SQLite metadata store, no HTTP), with and without its audit entry: bench:http's
// tokens row carries ~300 µs of HTTP, authentication and a shared machine around the same work,
// so the entry's own cost is read here, where it is most of what differs.
//
// Three ways, alternated in rounds on one database (the tables grow alike):
//   before #30  the creation as the commit before the audit log wrote it (989029a): a plain
//               insert built with Kysely on every call, no transaction, no entry
//   no entry    TokenService.create for a dashboard session's token, which records no entry:
//               today's creation with the entry left out (but its session_id is set, so it
//               writes the session index, which an API token's creation no longer does: 0017)
//   API, no entry  TokenService.create's steps for an API token with the entry left out (as
//               the bench:http baseline build does): the peer of "with entry"
//   with entry  TokenService.create: the token and its entry in one transaction
// CPU is this process's (process.cpuUsage: user + system, every thread), per creation.
// BENCH_CREATIONS (default 1,000) per way and round, BENCH_ROUNDS (default 7); medians.
import fs from 'node:fs';
import os from 'node:os';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { iso, systemClock } from '../src/shared/clock.js';
import { newId } from '../src/shared/ids.js';
import { parseScopes, tokenColumns } from '../src/tokens/token-service.js';
import { precompileInsert } from '../src/stores/metadata/precompiled.js';
import { generateToken, hashToken } from '../src/auth/token-secret.js';
import { auditRow } from '../src/audit/record.js';
import type { Tenant } from '../src/tenancy/tenant.js';
import { fmt, median, tempDir } from './support.js';

const creations = Number(process.env.BENCH_CREATIONS ?? 1000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);

const dataDir = tempDir('bench-token-create-');
const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'pro', ownerEmail: 'bench@example.com' });
// As the auth plugin hands it a request's service: an API token acts, from a client address.
const tenant: Tenant = {
  orgId: org.org_id,
  projectId: org.project_id,
  mode: 'live',
  origin: { actor: { type: 'token', id: newId.token(), name: 'bench' }, requestId: newId.request(), ip: '127.0.0.1', userAgent: 'bench/1' },
};
const scopes = parseScopes(['media:read']);

/** A new API token's row, as TokenService.create writes it (no session, no member). */
function apiTokenRow() {
  const token = generateToken(tenant.mode);
  return {
    id: newId.token(),
    org_id: tenant.orgId,
    project_id: tenant.projectId,
    mode: tenant.mode,
    name: 'bench',
    token_hash: hashToken(token),
    last_four: token.slice(-4),
    scopes: scopes.join(' '),
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    created_at: iso(systemClock.now()),
    session_id: null,
    created_by_user_id: null,
  };
}

/** 989029a's TokenService.create without an Idempotency-Key, on this database. */
async function beforeAudit(): Promise<void> {
  const row = apiTokenRow();
  await ctx.metadata.db.insertInto('api_tokens').values(row).execute();
}

const insertToken = precompileInsert(ctx.metadata.db, 'api_tokens', tokenColumns);
/** TokenService.create for an API token without an Idempotency-Key, the entry left out. */
async function apiNoEntry(): Promise<void> {
  const row = apiTokenRow();
  await ctx.metadata.writeAtomically([insertToken(row)]);
}

const ways: Record<string, () => Promise<unknown>> = {
  'before #30': beforeAudit,
  'no entry': () => ctx.tokens.create({ tenant, name: 'bench', scopes, expiresAt: null, sessionId: 'bench' }),
  'API, no entry': apiNoEntry,
  'with entry': () => ctx.tokens.create({ tenant, name: 'bench', scopes, expiresAt: null }),
};
const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));

async function measure(run: () => Promise<unknown>, n: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

try {
  for (const run of Object.values(ways)) await measure(run, creations); // warm (JIT, page cache)
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(ways)) cpu[name]!.push(await measure(run, creations));
  }
  // Building the entry's row alone (ids, timestamp, details JSON): part of "with entry".
  const change = { action: 'token.create' as const, origin: tenant.origin, orgId: tenant.orgId, projectId: tenant.projectId, mode: tenant.mode, target: { type: 'token', id: newId.token() }, at: Date.now(), details: { name: 'bench', scopes, expires_at: null } };
  const rowCpu: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < 100_000; i++) auditRow(change);
    const used = process.cpuUsage(before);
    rowCpu.push((used.user + used.system) / 100_000);
  }

  console.log(`token-create — ${rounds} rounds × ${fmt(creations)} creations per way, one at a time, medians (node ${process.version}, load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')})`);
  const m = (name: string) => median(cpu[name]!);
  for (const name of Object.keys(ways)) console.log(`  ${name.padEnd(13)} ${fmt(m(name), 1).padStart(7)} µs CPU per creation   (rounds: ${cpu[name]!.map((v) => fmt(v, 0)).join(' ')})`);
  const entry = m('with entry') - m('API, no entry');
  console.log(`  the entry's own cost (with entry − API, no entry): ${fmt(entry, 1)} µs = ${fmt((entry / m('API, no entry')) * 100, 1)}% of a creation without it; with entry / before #30 ${fmt((m('with entry') / m('before #30') - 1) * 100, 1)}%`);
  console.log(`  of which building the entry's row (auditRow): ${fmt(median(rowCpu), 2)} µs`);
} finally {
  await ctx.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
