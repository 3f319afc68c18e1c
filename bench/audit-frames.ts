// TREE=/path/to/checkout npx tsx bench/audit-frames.ts — WAL frames (deterministic) and CPU per
// commit of a token creation with and without its audit entry, on the metadata schema of the
// checkout TREE (default: this one) — docs/benchmarks.md, the token-creation rows. The statements
// are the checkout's own (its precompiled token insert and audit.entry), run as its
// writeAtomically runs them on SQLite (one better-sqlite3 transaction, BEGIN IMMEDIATE) on a raw
// connection with the store's pragmas and automatic checkpoints off, so that the WAL only grows:
// frames = (WAL bytes − 32) ÷ (page + 24).
//
// First SEED (default 20,000) tokens with their entries over ORGS (default 50) organisations,
// then per case COMMITS (default 500) commits: into one organisation, or spread over all.
// BLOCK_STATEMENT=1 (on a 0019 tree) drops the block trigger and writes the block with a third
// statement instead. ONLY=entry or ONLY=token runs one case, "with entry, spread" or "token alone,
// spread", once (for callgrind: instructions of COMMITS=600 minus COMMITS=100, ÷ 500).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';

const tree = path.resolve(process.env.TREE ?? '.');
const seed = Number(process.env.SEED ?? 20_000);
const orgCount = Number(process.env.ORGS ?? 50);
const commits = Number(process.env.COMMITS ?? 500);
const blockStatement = process.env.BLOCK_STATEMENT === '1';

const { openMetadataStore } = (await import(`${tree}/src/stores/metadata/database.ts`)) as typeof import('../src/stores/metadata/database.js');
const { precompileInsert } = (await import(`${tree}/src/stores/metadata/precompiled.ts`)) as typeof import('../src/stores/metadata/precompiled.js');
const { tokenColumns } = (await import(`${tree}/src/tokens/token-service.ts`)) as typeof import('../src/tokens/token-service.js');
const { audit } = (await import(`${tree}/src/audit/record.ts`)) as typeof import('../src/audit/record.js');
const { newId } = (await import(`${tree}/src/shared/ids.ts`)) as typeof import('../src/shared/ids.js');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-frames-'));
const store = await openMetadataStore({ databaseUrl: undefined, dataDir: dir });
const db = store.db;
const insertToken = precompileInsert(db, 'api_tokens', tokenColumns);
const orgs = Array.from({ length: orgCount }, () => ({ org: newId.org(), project: newId.project() }));
const origin = { actor: { type: 'token' as const, id: newId.token(), name: 'bench' }, requestId: newId.request(), ip: '127.0.0.1', userAgent: 'bench/1' };

function creation(o: { org: string; project: string }, withEntry: boolean): CompiledQuery[] {
  const id = newId.token();
  const now = Date.now();
  const token = insertToken({
    id,
    org_id: o.org,
    project_id: o.project,
    mode: 'live',
    name: 'bench',
    token_hash: `h${id}${'x'.repeat(40)}`,
    last_four: 'abcd',
    scopes: 'media:read',
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    created_at: new Date(now).toISOString(),
    session_id: null,
    created_by_user_id: null,
  });
  if (!withEntry) return [token];
  const change = { action: 'token.create' as const, origin, orgId: o.org, projectId: o.project, mode: 'live' as const, target: { type: 'token', id }, at: now, details: { name: 'bench', scopes: ['media:read'], expires_at: null } };
  const queries = [token, audit.entry(db, change)];
  if (blockStatement) queries.push({ ...queries[1]!, sql: blockSql, parameters: [o.org] });
  return queries;
}
const blockSql = 'insert into "audit_blocks" ("org_id", "block", "ts") values (?, last_insert_rowid() >> 10, (select "ts" from "audit_entries" where "seq" = last_insert_rowid())) on conflict do nothing';

await store.close();
const raw = new SQLite(path.join(dir, 'metadata.sqlite'));
raw.pragma('journal_mode = WAL');
raw.pragma('synchronous = NORMAL');
raw.pragma('foreign_keys = OFF');
raw.pragma('wal_autocheckpoint = 0');
if (blockStatement) raw.exec('drop trigger audit_entries_block');
const prepared = new Map<string, SQLite.Statement>();
const run = (q: CompiledQuery) => {
  let s = prepared.get(q.sql);
  if (!s) prepared.set(q.sql, (s = raw.prepare(q.sql.replace(/ limit \?/g, ' limit cast(? as integer)'))));
  s.run(q.parameters as unknown[]);
};
const all = raw.transaction((queries: CompiledQuery[]) => queries.forEach(run));
const commit = (queries: CompiledQuery[]) => (queries.length === 1 ? run(queries[0]!) : all.immediate(queries));

for (let i = 0; i < seed; i++) commit(creation(orgs[i % orgCount]!, true));
const pageSize = raw.pragma('page_size', { simple: true }) as number;
const walFile = path.join(dir, 'metadata.sqlite-wal');
const frames = () => (fs.statSync(walFile).size - 32) / (pageSize + 24);

function measure(name: string, pick: (i: number) => { org: string; project: string }, withEntry: boolean) {
  raw.pragma('wal_checkpoint(TRUNCATE)');
  for (let i = 0; i < 50; i++) commit(creation(pick(i), withEntry)); // warm: first frames after a checkpoint
  const f0 = frames();
  const batches = Array.from({ length: commits }, (_, i) => creation(pick(i + 50), withEntry));
  const t0 = process.cpuUsage();
  for (const queries of batches) commit(queries);
  const t = process.cpuUsage(t0);
  console.log(`  ${name.padEnd(26)} ${((frames() - f0) / commits).toFixed(2).padStart(6)} frames/commit  ${((t.user + t.system) / commits).toFixed(1).padStart(6)} µs CPU/commit`);
}

console.log(`audit-frames — tree ${tree}${blockStatement ? ' (block by statement)' : ''}, ${seed} seeded over ${orgCount} orgs, ${commits} commits per case, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
if (process.env.ONLY) measure(`${process.env.ONLY === 'entry' ? 'with entry' : 'token alone'}, spread`, (i) => orgs[i % orgCount]!, process.env.ONLY === 'entry');
else {
  for (const round of [1, 2]) {
    console.log(` round ${round}`);
    measure('token alone, one org', () => orgs[7]!, false);
    measure('with entry, one org', () => orgs[7]!, true);
    measure('token alone, spread', (i) => orgs[i % orgCount]!, false);
    measure('with entry, spread', (i) => orgs[i % orgCount]!, true);
  }
}
raw.close();
fs.rmSync(dir, { recursive: true, force: true });
