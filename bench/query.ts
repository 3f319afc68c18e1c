// npm run bench:query — POST /v1/query over HTTP against the same SQL run directly on DuckDB in
// the same process, on generated events (BENCH_QUERY_SIZES, default 1,000,000 and 10,000,000).
// Events are generated straight into the DuckDB file with SQL (range()), one tenant holding
// 90% of them across three datasets, another tenant the rest. For each size: median latency
// of a filtered page, a payload-key filter and group-bys; raw DuckDB first (own instance, the
// store's settings), then the real server on the same files.
import http from 'node:http';
import path from 'node:path';
import fs from 'node:fs';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { loadConfig } from '../src/config/config.js';
import { startServer } from '../src/server.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { eventColumns, tenantWhere } from '../src/stores/events/duckdb-sql.js';
import { eventStoreSettings } from '../src/stores/events/duckdb-tables.js';
import { compileDuckDbFilter, compileDuckDbGroupKey, parseSoql } from '../src/query/soql/index.js';
import type { Tenant } from '../src/tenancy/tenant.js';
import { fmt, median, tempDir } from './support.js';

const sizes = (process.env.BENCH_QUERY_SIZES ?? '1000000,10000000').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 15);
/** Raw and HTTP measurements alternate this many times per size. */
const phases = Number(process.env.BENCH_PHASES ?? 3);

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
const active = await server.events.datasets.listActive(tenant);
const datasetIds = new Map(active.map((d) => [d.name, d.id]));
const ids = [...datasetIds.values()];
await server.close();

/** The statement the event store runs for a query (duckdb-tables.ts), with its params: the same compilers. */
function storeSql(q: string, now: number, tenantId: number): { sql: string; params: DuckDBValue[] } {
  const query = parseSoql(q);
  const compiled = compileDuckDbFilter(query, { now, datasetIds });
  const where = `${tenantWhere} AND (dataset_id IN (${ids.map(() => '?').join(', ')}) AND (${compiled.where}))`;
  const params: DuckDBValue[] = [tenantId, ...ids, ...compiled.params];
  if (!query.groupBy) return { sql: `SELECT ${eventColumns} FROM events WHERE ${where} ORDER BY ts DESC, event_id DESC LIMIT 101`, params };
  const key = compileDuckDbGroupKey(query.groupBy);
  return {
    sql: `SELECT ${key.sql} AS value, count(*) AS n FROM events WHERE ${where} GROUP BY 1 ORDER BY n DESC, value ASC NULLS LAST LIMIT 100`,
    params: [...(key.params as DuckDBValue[]), ...params],
  };
}

/** `n` timed runs after warm-up runs (the first size also warms the JIT for the HTTP path). */
const time = async (n: number, work: () => Promise<unknown>) => {
  for (let k = 0; k < 5; k++) await work();
  const samples: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = performance.now();
    await work();
    samples.push(performance.now() - t);
  }
  return samples;
};

const openRaw = () => DuckDBInstance.create(dbFile, eventStoreSettings(path.join(dir, 'events', 'tmp')));

let generated = 0;
const base = Date.now() - 8 * 86_400_000;
console.log(`bench:query — ${runs} runs per figure in ${phases} alternating raw/HTTP phases (median), data dir ${dir}`);
for (const size of sizes) {
  // 2. Generate events up to `size` straight into DuckDB.
  const t = performance.now();
  const instance = await openRaw();
  const c = await instance.connect();
  // The seed ingest registered the tenant (duckdb-sql.ts: event_tenants); the other tenant is made up here.
  const tenantId = Number((await c.runAndReadAll('SELECT id FROM event_tenants WHERE org_id = ?', [tenant.orgId])).getRows()[0]![0]);
  const otherId = 1000;
  await c.run(`INSERT INTO event_tenants SELECT ${otherId}, 'other-org', 'other-project', 'live' WHERE NOT EXISTS (SELECT 1 FROM event_tenants WHERE id = ${otherId})`);
  const step = 1_000_000;
  for (let from = generated; from < size; from += step) {
    const to = Math.min(size, from + step);
    await c.run(
      `INSERT INTO events SELECT
         i, CASE WHEN i % 10 = 9 THEN ${otherId} ELSE ${tenantId} END,
         CASE i % 3 WHEN 0 THEN ? WHEN 1 THEN ? ELSE ? END,
         uuid(), ${base} + i * 60, ${base} + i * 60 + 5,
         (hash(i) % 5)::UTINYINT, 'evt.' || (i % 50),
         CASE WHEN i % 7 = 0 THEN NULL ELSE 'player-' || (i % 10000) END,
         'srv-' || (i % 20), 'message number ' || i,
         json_object('map', ['dust', 'nuke', 'inferno', 'mirage', 'vertigo'][(i % 5) + 1], 'ping', (i * 7919) % 400, 'round', i % 30)::VARCHAR,
         200
       FROM range(${from}, ${to}) t(i)`,
      [ids[0]!, ids[1]!, ids[2]!],
    );
  }
  await c.run('CHECKPOINT');
  generated = size;
  console.log(`\n${fmt(size)} events (generated in ${fmt((performance.now() - t) / 1000, 1)} s)`);

  c.closeSync();
  instance.closeSync();

  // 3. Raw DuckDB (the store's statements, a fresh connection each, as the store reads) and the
  // server over HTTP on the same files, in alternating phases so that drift in this machine's
  // speed and cold caches after each reopen hit both sides alike.
  const now = Date.now();
  const rawSamples = new Map<string, number[]>(queries.map((q) => [q.name, []]));
  const httpSamples = new Map<string, number[]>(queries.map((q) => [q.name, []]));
  const shapes = new Map<string, string>();
  const perPhase = Math.max(1, Math.ceil(runs / phases));
  for (let phase = 0; phase < phases; phase++) {
    const rawInstance = await openRaw();
    for (const { name, q } of queries) {
      const { sql, params } = storeSql(q, now, tenantId);
      rawSamples.get(name)!.push(
        ...(await time(perPhase, async () => {
          const conn = await rawInstance.connect();
          (await conn.runAndReadAll(sql, params)).getRows();
          conn.closeSync();
        })),
      );
    }
    rawInstance.closeSync();

    server = await start();
    // node:http with a keep-alive agent: the client shares this process with the server, and
    // fetch's own per-response work (~1–2 ms for a 40 KB page) would be counted as the server's.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = (q: string) =>
      new Promise<{ events?: unknown[]; groups?: unknown[] }>((resolve, reject) => {
        const payload = JSON.stringify({ q });
        const request = http.request(
          `${server.apiUrl}/v1/query`,
          { method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => {
              const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events?: unknown[]; groups?: unknown[] };
              if (response.statusCode !== 200) reject(new Error(`${q}: ${response.statusCode} ${JSON.stringify(body)}`));
              else resolve(body);
            });
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end(payload);
      });
    for (const { name, q } of queries) {
      const sample = await post(q);
      shapes.set(name, sample.events ? `${sample.events.length} events` : `${sample.groups!.length} groups`);
      httpSamples.get(name)!.push(...(await time(perPhase, () => post(q))));
    }
    agent.destroy();
    await server.close();
  }
  for (const { name, q } of queries) {
    const http = median(httpSamples.get(name)!);
    const r = median(rawSamples.get(name)!);
    console.log(
      `  ${name.padEnd(22)} http ${fmt(http, 1).padStart(8)} ms   duckdb ${fmt(r, 1).padStart(8)} ms   ratio ${fmt(http / r, 2)}×   (${shapes.get(name)}; q: ${q})`,
    );
  }
}
console.log('\ngoals: page < 50 ms; group-by over 10M < 500 ms; overhead over raw DuckDB ≤ 1.3×');
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
