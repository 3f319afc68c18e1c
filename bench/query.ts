// npm run bench:query — POST /v1/query over HTTP against the same SQL run directly on DuckDB in
// the same process, on generated events (BENCH_QUERY_SIZES, default 1,000,000 and 10,000,000).
// Events are generated straight into the DuckDB file with SQL (range()), one tenant holding
// 90% of them across three datasets, another tenant the rest. For each size: median latency
// of a filtered page, a payload-key filter and group-bys; raw DuckDB first (own instance, the
// store's settings), then the real server on the same files.
import path from 'node:path';
import fs from 'node:fs';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { loadConfig } from '../src/config/config.js';
import { startServer } from '../src/server.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { eventsRuntime } from '../src/datasets/runtime.js';
import { eventColumns, tenantParams, tenantWhere } from '../src/stores/events/duckdb-sql.js';
import { compileDuckDbFilter, parseSoql } from '../src/query/soql/index.js';
import type { Tenant } from '../src/tenancy/tenant.js';
import { fmt, median, tempDir } from './support.js';

const sizes = (process.env.BENCH_QUERY_SIZES ?? '1000000,10000000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 15);

const queries = [
  { name: 'filtered page', q: 'severity >= error AND source:srv-1*' },
  { name: 'payload-key filter', q: 'payload.ping > 350 AND payload.map:dust' },
  { name: 'group by source', q: 'severity >= warn group by source' },
  { name: 'group by payload.map', q: 'severity >= warn group by payload.map' },
];

const dir = tempDir('ops-bench-query-');
const config = loadConfig({
  OPS_PORT: '0',
  OPS_CDN_PORT: '0',
  OPS_HOST: '127.0.0.1',
  OPS_DATA_DIR: dir,
  OPS_RATE_LIMIT_PER_SECOND: '100000',
  OPS_RATE_LIMIT_BURST: '100000',
});
const start = () => startServer(config, { logger: false });
const dbFile = path.join(dir, 'events', 'events.duckdb');

// 1. Organisation, token and datasets through the real server.
let server = await start();
const org = await server.ctx.orgs.createOrg({ name: 'Bench', plan: 'enterprise', ownerEmail: 'bench@example.com', ownerName: 'Bench' });
const tenant: Tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' };
const { token } = await server.ctx.tokens.create({ tenant, name: 'bench', scopes: parseScopes(['logs:read', 'logs:write']), expiresAt: null });
for (const name of ['game', 'auth', 'matchmaking']) {
  const r = await fetch(`${server.apiUrl}/v1/datasets/${name}/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ event: 'seed', ts: Date.now() - 30 * 86_400_000 }]),
  });
  if (!r.ok) throw new Error(`ingest ${name}: ${r.status} ${await r.text()}`);
}
const active = await (await eventsRuntime(server.ctx)).datasets.listActive(tenant);
const datasetIds = new Map(active.map((d) => [d.name, d.id]));
const ids = [...datasetIds.values()];
await server.close();

/** The statement the event store runs for a query (duckdb-event-store.ts), with its params. */
function storeSql(q: string, now: number): { sql: string; params: DuckDBValue[] } {
  const query = parseSoql(q);
  const compiled = compileDuckDbFilter(query, { now, datasetIds });
  const where = `${tenantWhere} AND (dataset_id IN (${ids.map(() => '?').join(', ')}) AND (${compiled.where}))`;
  const params: DuckDBValue[] = [...tenantParams(tenant), ...ids, ...compiled.params];
  if (!query.groupBy) return { sql: `SELECT ${eventColumns} FROM events WHERE ${where} ORDER BY ts DESC, event_id DESC LIMIT 101`, params };
  const key = query.groupBy.kind === 'payload' ? `NULLIF(json_extract(payload, '$."${query.groupBy.path.join('"."')}"')::VARCHAR, 'null')` : query.groupBy.name;
  return { sql: `SELECT ${key} AS value, count(*) AS n FROM events WHERE ${where} GROUP BY 1 ORDER BY n DESC, value ASC NULLS LAST LIMIT 100`, params };
}

const time = async (work: () => Promise<unknown>) => {
  for (let k = 0; k < 2; k++) await work();
  const samples: number[] = [];
  for (let k = 0; k < runs; k++) {
    const t = performance.now();
    await work();
    samples.push(performance.now() - t);
  }
  return median(samples);
};

const openRaw = () =>
  DuckDBInstance.create(dbFile, { memory_limit: '192MB', threads: '2', temp_directory: path.join(dir, 'events', 'tmp'), preserve_insertion_order: 'false' });

let generated = 0;
const base = Date.now() - 8 * 86_400_000;
console.log(`bench:query — ${runs} runs per figure (median), data dir ${dir}`);
for (const size of sizes) {
  // 2. Generate events up to `size` straight into DuckDB.
  const t = performance.now();
  const instance = await openRaw();
  const c = await instance.connect();
  const step = 1_000_000;
  for (let from = generated; from < size; from += step) {
    const to = Math.min(size, from + step);
    await c.run(
      `INSERT INTO events SELECT
         i, CASE WHEN i % 10 = 9 THEN 'other-org' ELSE ? END, ?, 'live',
         CASE i % 3 WHEN 0 THEN ? WHEN 1 THEN ? ELSE ? END,
         uuid(), ${base} + i * 60, ${base} + i * 60 + 5,
         (hash(i) % 5)::UTINYINT, 'evt.' || (i % 50),
         CASE WHEN i % 7 = 0 THEN NULL ELSE 'player-' || (i % 10000) END,
         'srv-' || (i % 20), 'message number ' || i,
         json_object('map', ['dust', 'nuke', 'inferno', 'mirage', 'vertigo'][(i % 5) + 1], 'ping', (i * 7919) % 400, 'round', i % 30)::JSON,
         200
       FROM range(${from}, ${to}) t(i)`,
      [tenant.orgId, tenant.projectId, ids[0]!, ids[1]!, ids[2]!],
    );
  }
  await c.run('CHECKPOINT');
  generated = size;
  console.log(`\n${fmt(size)} events (generated in ${fmt((performance.now() - t) / 1000, 1)} s)`);

  // 3. Raw DuckDB: the store's statements on a fresh connection each, as the store reads.
  const now = Date.now();
  const raw = new Map<string, number>();
  for (const { name, q } of queries) {
    const { sql, params } = storeSql(q, now);
    raw.set(
      name,
      await time(async () => {
        const conn = await instance.connect();
        (await conn.runAndReadAll(sql, params)).getRows();
        conn.closeSync();
      }),
    );
  }
  c.closeSync();
  instance.closeSync();

  // 4. The server over HTTP, same files.
  server = await start();
  const post = async (q: string) => {
    const r = await fetch(`${server.apiUrl}/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ q }),
    });
    const body = (await r.json()) as { events?: unknown[]; groups?: unknown[] };
    if (!r.ok) throw new Error(`${q}: ${r.status} ${JSON.stringify(body)}`);
    return body;
  };
  for (const { name, q } of queries) {
    const sample = await post(q);
    const http = await time(() => post(q));
    const r = raw.get(name)!;
    const rows = sample.events ? `${sample.events.length} events` : `${sample.groups!.length} groups`;
    console.log(
      `  ${name.padEnd(22)} http ${fmt(http, 1).padStart(8)} ms   duckdb ${fmt(r, 1).padStart(8)} ms   ratio ${fmt(http / r, 2)}×   (${rows}; q: ${q})`,
    );
  }
  await server.close();
}
console.log('\ngoals: page < 50 ms; group-by over 10M < 500 ms; overhead over raw DuckDB ≤ 1.3×');
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
