// npm run bench:query — POST /v1/query over HTTP against the same SQL run directly on DuckDB in
// the same process, on generated events (BENCH_QUERY_SIZES, default 1,000,000 and 10,000,000).
// Events are generated straight into the DuckDB file with SQL (range()), one tenant holding
// 90% of them across three datasets, another tenant the rest. For each size: median latency
// of a filtered page, a payload-key filter and group-bys; raw DuckDB first (own instance, the
// store's settings), then the real server on the same files.
//
// Then the same on ClickHouse (bench/clickhouse-support.ts says which; one line says why when
// skipped): events generated straight into the cluster's MergeTree tables with SQL (numbers()),
// the same distribution, the server (in this process) with OPS_EVENTS_URL=clickhouse://… on a
// database of this run's own, and raw = a ClickHouseEngine opened directly in this process,
// whose query/aggregate send the engine's statements with @clickhouse/client. Medians of both
// engines side by side at the end.
import http from 'node:http';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { loadConfig } from '../src/config/config.js';
import { startServer } from '../src/server.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { eventColumns, tenantWhere } from '../src/engine/duckdb/duckdb-sql.js';
import { eventStoreSettings } from '../src/engine/duckdb/duckdb-tables.js';
import { parseSoql, planStats, statsRowLimit } from '../src/soql/index.js';
import { compileDuckDbFilter, compileDuckDbGroupKey, compileFilter, compileGroupKey, compileStats } from '../src/engine/soql-compile.js';
import { statsSelect } from '../src/engine/event-store.js';
import { maxGroups, pageSize } from '../src/query/query-service.js';
import { ClickHouseEngine } from '../src/engine/clickhouse/clickhouse-engine.js';
import { tenantKey, type Tenant } from '../src/tenancy/tenant.js';
import { fmt, median, tempDir } from './support.js';
import { hotColumn, type HotSlot } from '../src/engine/hot-columns.js';
import { slotAssignments } from '../src/engine/clickhouse/clickhouse-hot-backfill.js';
import { benchDatabaseUrl, ClickHouseHosts, dropClickHouseDatabase, findClickHouse, generateEvents, traceStatements } from './clickhouse-support.js';

const sizes = (process.env.BENCH_QUERY_SIZES ?? '1000000,10000000').split(',').map(Number);
/** BENCH_DUCKDB=0: the ClickHouse part only. */
const duckSizes = process.env.BENCH_DUCKDB === '0' ? [] : sizes;
const runs = Number(process.env.BENCH_RUNS ?? 15);
/** Raw and HTTP measurements alternate this many times per size. */
const phases = Number(process.env.BENCH_PHASES ?? 3);
/** Warm-up runs per query and phase on ClickHouse (its caches are the server's; a run at 10M takes ~1 s). */
const chWarmups = Number(process.env.BENCH_CH_WARMUPS ?? 2);

/** Generated events start here, 60 ms apart (8 days before now: 10M events end ~1 day ago). */
const base = Date.now() - 8 * 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

const queries = [
  { name: 'filtered page', q: 'severity >= error AND source:srv-1*' },
  { name: 'payload-key filter', q: 'payload.ping > 350 AND payload.map:dust' },
  { name: 'group by source', q: 'severity >= warn group by source' },
  { name: 'group by payload.map', q: 'severity >= warn group by payload.map' },
  // SOQL stats: a 24-hour histogram of 1-minute bins (the generated data's first
  // day: 1.44M events, all of them at 1M), and a percentile of a payload number over everything.
  { name: 'stats by bin(1m) 24h', q: `ts >= ${iso(base)} AND ts < ${iso(base + 86_400_000)} stats count() by bin(1m)` },
  { name: 'p95(ping) by source', q: 'stats p95(payload.ping) by source' },
];

/** Each payload-key query beside the same query on a canonical column of the same type. */
const hotPairs = [
  ['count where severity', 'severity == error stats count()'],
  ['count where payload.map', 'payload.map == dust stats count()'],
  ['group by source', 'group by source'],
  ['group by payload.map', 'group by payload.map'],
  ['p95(bytes_raw) by source', 'stats p95(bytes_raw) by source'],
  ['p95(payload.ping) by source', 'stats p95(payload.ping) by source'],
] as const;

const dir = tempDir('ops-bench-query-');
const serverEnv = (dataDir: string, extra: Record<string, string> = {}) =>
  loadConfig({
    OPS_PORT: '0',
    OPS_CDN_PORT: '0',
    OPS_HOST: '127.0.0.1',
    OPS_DATA_DIR: dataDir,
    OPS_RATE_LIMIT_PER_SECOND: '100000',
    OPS_RATE_LIMIT_BURST: '100000',
    ...extra,
  });
/**
 * The servers of the measurements other than the default settings' hot keys: no hot keys chosen
 * in the background (the bench's baselines read the JSON; the pinned phase pins its own).
 */
const noBackground = { OPS_HOT_KEYS_AUTO: 'false', OPS_HOT_KEYS_INTERVAL_MS: '86400000' };
const config = serverEnv(dir, noBackground);
const start = () => startServer(config, { logger: false });
/** The default settings (nothing set about hot keys): what the "defaults" phase runs. */
const defaultsConfig = serverEnv(dir);
const dbFile = path.join(dir, 'events', 'events.duckdb');

/** Organisation, token and the three datasets (one seed event each, 30 days old) through the real server. */
async function seed(server: Awaited<ReturnType<typeof startServer>>) {
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
  return { tenant, token, datasetIds: new Map(active.map((d) => [d.name, d.id])) };
}

// 1. Organisation, token and datasets through the real server.
let server = await start();
const { tenant, token, datasetIds } = await seed(server);
const ids = [...datasetIds.values()];
await server.close();

/** The statement the event store runs for a query (duckdb-tables.ts), with its params: the same compilers. */
function storeSql(q: string, now: number, tenantId: number): { sql: string; params: DuckDBValue[] } {
  const query = planStats(parseSoql(q), q, now);
  const compiled = compileDuckDbFilter(query, { now, datasetIds });
  const where = `${tenantWhere} AND (dataset_id IN (${ids.map(() => '?').join(', ')}) AND (${compiled.where}))`;
  const params: DuckDBValue[] = [tenantId, ...ids, ...compiled.params];
  if (query.stats) {
    const stats = { filter: { where: '', params: [] }, ...compileStats(query.stats, 'duckdb'), limit: statsRowLimit(query.stats) };
    const select = statsSelect(stats);
    return {
      sql: `SELECT ${select.select} FROM events WHERE ${where}${select.groupBy} ORDER BY ${stats.orderBy} LIMIT ${stats.limit}`,
      params: [...(select.params as DuckDBValue[]), ...params],
    };
  }
  if (!query.groupBy) return { sql: `SELECT ${eventColumns} FROM events WHERE ${where} ORDER BY ts DESC, event_id DESC LIMIT 101`, params };
  const key = compileDuckDbGroupKey(query.groupBy);
  return {
    sql: `SELECT ${key.sql} AS value, count(*) AS n FROM events WHERE ${where} GROUP BY 1 ORDER BY n DESC, value ASC NULLS LAST LIMIT 100`,
    params: [...(key.params as DuckDBValue[]), ...params],
  };
}

/** `n` timed runs after warm-up runs (the first size also warms the JIT for the HTTP path). */
const time = async (n: number, work: () => Promise<unknown>, warmups = 5) => {
  for (let k = 0; k < warmups; k++) await work();
  const samples: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = performance.now();
    await work();
    samples.push(performance.now() - t);
  }
  return samples;
};

/**
 * POST /v1/query with node:http and a keep-alive agent: the client shares this process with the
 * server, and fetch's own per-response work (~1–2 ms for a 40 KB page) would be counted as the server's.
 */
function httpClient(apiUrl: string, bearer: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (q: string) =>
    new Promise<{ events?: unknown[]; groups?: unknown[]; stats?: unknown[] }>((resolve, reject) => {
      const payload = JSON.stringify({ q });
      const request = http.request(
        `${apiUrl}/v1/query`,
        { method: 'POST', agent, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events?: unknown[]; groups?: unknown[]; stats?: unknown[] };
            if (response.statusCode !== 200) reject(new Error(`${q}: ${response.statusCode} ${JSON.stringify(body)}`));
            else resolve(body);
          });
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(payload);
    });
  return { post, close: () => agent.destroy() };
}

/** A statement for the log: one line, a long IN list of event ids as its count. */
const abbreviate = (sql: string) =>
  sql.replace(/\s+/g, ' ').replace(/IN \(('[0-9a-f-]{36}'(?:, )?){4,}\)/g, (list) => `IN (${list.split(',').length} event ids)`);

/** Medians of one engine at one size, by query name: HTTP, raw, and the answer's shape. */
type SizeResult = Map<string, { http: number; raw: number; shape: string }>;
const duckResults = new Map<number, SizeResult>();

const openRaw = () => DuckDBInstance.create(dbFile, eventStoreSettings(path.join(dir, 'events', 'tmp')));

let generated = 0;
console.log(`bench:query — ${runs} runs per figure in ${phases} alternating raw/HTTP phases (median), data dir ${dir}`);
for (const size of duckSizes) {
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
    const client = httpClient(server.apiUrl, token);
    for (const { name, q } of queries) {
      const sample = await client.post(q);
      shapes.set(name, sample.events ? `${sample.events.length} events` : sample.stats ? `${sample.stats.length} stats rows` : `${sample.groups!.length} groups`);
      httpSamples.get(name)!.push(...(await time(perPhase, () => client.post(q))));
    }
    client.close();
    await server.close();
  }
  const sizeResult: SizeResult = new Map();
  duckResults.set(size, sizeResult);
  for (const { name, q } of queries) {
    const http = median(httpSamples.get(name)!);
    const r = median(rawSamples.get(name)!);
    sizeResult.set(name, { http, raw: r, shape: shapes.get(name)! });
    console.log(
      `  ${name.padEnd(22)} http ${fmt(http, 1).padStart(8)} ms   duckdb ${fmt(r, 1).padStart(8)} ms   ratio ${fmt(http / r, 2)}×   (${shapes.get(name)}; q: ${q})`,
    );
  }
  await hotKeyRows(size);
}

/**
 * Hot payload keys: the same queries on a payload key and on a canonical column,
 * with the payload keys read from the JSON, then from their hot columns. The keys are made hot
 * through the server's store (the layouts and columns it would make), and the generated rows'
 * hot columns filled with SQL as the loader would have filled them at load (the bench generates
 * rows without the loader). Bytes per event: copies of the table into files of their own,
 * without and with the hot columns.
 */
async function hotKeyRows(size: number): Promise<void> {
  const measure = async (running?: Awaited<ReturnType<typeof startServer>>) => {
    const results = new Map<string, number>();
    server = running ?? (await start());
    const client = httpClient(server.apiUrl, token);
    for (const [name, q] of hotPairs) results.set(name, median(await time(runs, () => client.post(q), 3)));
    client.close();
    return results;
  };
  const raw = await openRaw();
  let c = await raw.connect();
  // From no hot keys at all: the rows' layouts and the engine's layouts cleared.
  const hasHot = (await c.runAndReadAll("SELECT count(*) FROM duckdb_columns() WHERE table_name = 'events' AND column_name = 'hot_layout'")).getRows()[0]![0];
  if (Number(hasHot)) await c.run('UPDATE events SET hot_layout = NULL');
  await c.run('DELETE FROM event_hot_layouts');
  c.closeSync();
  raw.closeSync();
  const json = await measure();
  await server.close();

  // The default settings: the server receives events again and is left alone until its
  // background task chose the keys and filled the older rows' columns.
  const defaults = await startServer(defaultsConfig, { logger: false });
  const idle = await waitForDefaults(defaults, tenant, datasetIds, token);
  const def = await measure(defaults);
  await defaults.close();
  server = await start();
  // Three hot keys (map, ping, round), through the store as PATCH /datasets/{name} would.
  for (const id of ids) {
    await server.events.store.setHotKeys(tenant, id, [
      { pointer: '/map', type: 'string' },
      { pointer: '/ping', type: 'number' },
      { pointer: '/round', type: 'number' },
    ]);
  }
  await server.close();
  const t = performance.now();
  const filled = await openRaw();
  c = await filled.connect();
  const layouts = (await c.runAndReadAll('SELECT id, dataset_id, slots FROM event_hot_layouts')).getRows();
  for (const [id, datasetId, slotsText] of layouts) {
    const slots = JSON.parse(slotsText as string) as HotSlot[];
    const set = slots.map((s) => `${hotColumn(s)} = ${s.type === 'number' ? `TRY_CAST(json_extract(payload, '${s.pointer}')::VARCHAR AS DOUBLE)` : `json_extract_string(payload, '${s.pointer}')`}`);
    await c.run(`UPDATE events SET hot_layout = ${Number(id)}, hot_json = 0, ${set.join(', ')} WHERE dataset_id = ?`, [datasetId as string]);
  }
  await c.run('CHECKPOINT');
  const fillMs = performance.now() - t;
  // Bytes per event: the table copied into a file of its own, without and with the hot columns.
  const bytes = async (select: string, name: string) => {
    const file = path.join(dir, `${name}.duckdb`);
    fs.rmSync(file, { force: true });
    await c.run(`ATTACH '${file}' AS ${name}`);
    await c.run(`CREATE TABLE ${name}.events AS SELECT ${select} FROM events ORDER BY seq`);
    await c.run(`DETACH ${name}`);
    const b = fs.statSync(file).size;
    fs.rmSync(file, { force: true });
    return b / size;
  };
  const hotCols = (await c.runAndReadAll("SELECT column_name FROM duckdb_columns() WHERE table_name = 'events' AND column_name LIKE 'hot_%' ORDER BY column_index")).getRows().map((r) => r[0] as string);
  const base = (await c.runAndReadAll("SELECT column_name FROM duckdb_columns() WHERE table_name = 'events' AND column_name NOT LIKE 'hot_%' ORDER BY column_index")).getRows().map((r) => r[0] as string);
  const before = await bytes(base.join(', '), 'bytes_before');
  const afterBytes = await bytes([...base, ...hotCols].join(', '), 'bytes_after');
  c.closeSync();
  filled.closeSync();
  const hot = await measure();
  await server.close();
  printHotRows('', { json, def, pinned: hot }, idle, `pinned: map, ping, round through the store, the rows filled with SQL in ${fmt(fillMs / 1000, 1)} s`);
  console.log(`    bytes per event: ${fmt(before, 1)} without hot columns, ${fmt(afterBytes, 1)} with 3 (${fmt((afterBytes / before - 1) * 100, 1)}% more)`);
}

/**
 * The default settings' part of the hot-key rows: 1,200 events of the generated shape sent to
 * each dataset over HTTP (the product receiving events again; its background task looks at the
 * datasets that take events), then nothing until every dataset has keys and its stored rows all
 * carry them (EventStore.hotLayouts: no rows of another layout). Answers how long each took.
 */
async function waitForDefaults(running: Awaited<ReturnType<typeof startServer>>, who: Tenant, datasets: ReadonlyMap<string, string>, bearer: string): Promise<{ chosenMs: number; filledMs: number; keys: string }> {
  const started = performance.now();
  for (const name of datasets.keys()) {
    const events = Array.from({ length: 1_200 }, (_, i) => ({ event: `evt.${i % 50}`, source: `srv-${i % 20}`, payload: { map: ['dust', 'nuke', 'inferno', 'mirage', 'vertigo'][i % 5], ping: (i * 7919) % 400, round: i % 30 } }));
    const r = await fetch(`${running.apiUrl}/v1/datasets/${name}/ingest`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(events) });
    if (!r.ok) throw new Error(`ingest ${name}: ${r.status} ${await r.text()}`);
  }
  const ids = [...datasets.values()];
  let chosenMs = NaN;
  const deadline = started + 30 * 60_000;
  for (;;) {
    const layouts = await running.events.store.hotLayouts(who, ids);
    const done = ids.map((id) => {
      const mine = layouts.filter((l) => l.datasetId === id);
      const current = mine.find((l) => l.current) ?? mine.filter((l) => l.slots.length).sort((a, b) => b.id - a.id)[0];
      const withRows = mine.filter((l) => l.rows !== undefined || l.stored !== undefined);
      return { chosen: !!current?.slots.length, filled: !!current?.slots.length && withRows.every((l) => l.id === current.id) };
    });
    if (Number.isNaN(chosenMs) && done.every((d) => d.chosen)) chosenMs = performance.now() - started;
    if (done.every((d) => d.filled)) break;
    if (performance.now() > deadline) throw new Error('the default settings did not choose and fill the hot keys within 30 minutes');
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const list = await running.events.datasets.listActive(who);
  const keys = [...new Set(list.flatMap((d) => (d.hot_keys ? (JSON.parse(d.hot_keys) as Array<{ path: string[] }>).map((k) => k.path.join('.')) : [])))].join(', ');
  return { chosenMs, filledMs: performance.now() - started, keys };
}

/** The hot-key rows of one engine: HTTP medians per query and phase, and each payload query ÷ its canonical one. */
function printHotRows(engine: string, phases: { json: Map<string, number>; def: Map<string, number>; pinned: Map<string, number> }, idle: { chosenMs: number; filledMs: number; keys: string }, pinnedHow: string): void {
  console.log(`  hot payload keys${engine}, HTTP medians, ms (load average ${fmt(os.loadavg()[0]!, 1)} on ${os.cpus().length} cores):`);
  console.log(`    json: no hot keys; defaults: no setting, keys chosen in the background (${idle.keys}) ${fmt(idle.chosenMs / 1000, 0)} s and the rows filled ${fmt(idle.filledMs / 1000, 0)} s after 1,200 events per dataset; ${pinnedHow}`);
  for (const [name] of hotPairs) {
    const cells = (['json', 'def', 'pinned'] as const).map((p) => `${p === 'def' ? 'defaults' : p} ${fmt(phases[p].get(name)!, 1).padStart(8)}`);
    console.log(`    ${name.padEnd(28)} ${cells.join('   ')}`);
  }
  const ratio = (a: string, b: string) =>
    (['json', 'def', 'pinned'] as const).map((p) => `${p === 'def' ? 'defaults' : p} ${fmt(phases[p].get(a)! / phases[p].get(b)!, 2)}×`).join(', ');
  console.log(`    payload key ÷ canonical column (goal ≤ 1.3× with the defaults):`);
  console.log(`      filter         ${ratio('count where payload.map', 'count where severity')}`);
  console.log(`      group by       ${ratio('group by payload.map', 'group by source')}`);
  console.log(`      p95 by source  ${ratio('p95(payload.ping) by source', 'p95(bytes_raw) by source')}`);
}
console.log('\ngoals: page < 50 ms; group-by over 10M < 500 ms; stats (bin(1m) over 24 h, p95 by source over 10M) < 500 ms; overhead over raw DuckDB ≤ 1.3×');
fs.rmSync(dir, { recursive: true, force: true });

// 4. ClickHouse.
const found = await findClickHouse();
if ('skipped' in found) {
  console.log(`\nClickHouse skipped: ${found.skipped}`);
  process.exit(0);
}
const chResults = await clickHouseBench(found.base, found.version);
console.log('\nside by side, median ms (ratio = HTTP / raw; raw DuckDB: the statement on a DuckDB connection; raw ClickHouse: a ClickHouseEngine in this process)');
console.log(`  ${'size'.padStart(10)}  ${'query'.padEnd(22)} ${'duckdb http'.padStart(11)} ${'raw'.padStart(8)} ${'ratio'.padStart(6)}  | ${'clickhouse http'.padStart(15)} ${'raw'.padStart(8)} ${'ratio'.padStart(6)}`);
for (const size of sizes) {
  for (const { name } of queries) {
    const d = duckResults.get(size)?.get(name);
    const c = chResults.get(size)?.get(name);
    const cell = (r: { http: number; raw: number } | undefined, w: number) =>
      r ? `${fmt(r.http, 1).padStart(w)} ${fmt(r.raw, 1).padStart(8)} ${(fmt(r.http / r.raw, 2) + '×').padStart(6)}` : '—'.padStart(w + 16);
    console.log(`  ${fmt(size).padStart(10)}  ${name.padEnd(22)} ${cell(d, 11)}  | ${cell(c, 15)}`);
  }
}
console.log('goals on ClickHouse: page < 50 ms; group-by and stats over 10M < 500 ms; HTTP over the same statements sent straight to ClickHouse ≤ 1.3×');
process.exit(0);

/**
 * The ClickHouse side: a server (in this process) on a database of this run's own, seeded like
 * the DuckDB side; events generated on each shard with SQL; then raw (a ClickHouseEngine opened
 * here: its query/aggregate are exactly the statements the server's engine sends, sent with
 * @clickhouse/client, and their rows parsed) and HTTP in alternating phases. The database is
 * dropped at the end, however the bench ends.
 */
async function clickHouseBench(baseUrl: string, version: string): Promise<Map<number, SizeResult>> {
  const results = new Map<number, SizeResult>();
  const url = benchDatabaseUrl(baseUrl, 'query');
  const chDir = tempDir('ops-bench-query-ch-');
  const hosts = new ClickHouseHosts(url);
  let chServer: Awaited<ReturnType<typeof startServer>> | undefined;
  let engine: ClickHouseEngine | undefined;
  try {
    console.log(`\nClickHouse ${version}: ${url.replace(/^clickhouse:\/\/[^@]*@/, 'clickhouse://')} (${hosts.clients.length} host${hosts.clients.length > 1 ? 's' : ''})`);
    // The server migrates the database (the engine's tables) and loads the seed events.
    chServer = await startServer(serverEnv(chDir, { OPS_EVENTS_URL: url, ...noBackground }), { logger: false });
    const seeded = await seed(chServer);
    const chIds = [...seeded.datasetIds.values()];
    engine = await ClickHouseEngine.open(url);
    let client = httpClient(chServer.apiUrl, seeded.token);

    /** What the store's SOQL read hands its engine for `q` (src/engine/soql-read.ts), run on the engine directly. */
    const rawCall = (q: string, now: number) => {
      const query = planStats(parseSoql(q), q, now);
      const compiled = compileFilter(query, { now, datasetIds: seeded.datasetIds }, 'clickhouse');
      const filter = { where: `dataset_id IN (${chIds.map(() => '?').join(', ')}) AND (${compiled.where})`, params: [...chIds, ...compiled.params] };
      if (query.stats) {
        const stats = query.stats;
        return async () => (await engine!.stats(seeded.tenant, { filter, ...compileStats(stats, 'clickhouse'), limit: statsRowLimit(stats) })).length;
      }
      if (query.groupBy) {
        const key = compileGroupKey(query.groupBy, 'clickhouse');
        return async () => (await engine!.aggregate(seeded.tenant, { filter, key, limit: maxGroups })).length;
      }
      return async () => (await engine!.query(seeded.tenant, { filter, limit: pageSize })).events.length;
    };

    let chGenerated = 0;
    for (const size of sizes) {
      const t = performance.now();
      await generateEvents(hosts, { from: chGenerated, to: size, tenantKey: tenantKey(seeded.tenant), otherKey: 'other-org/other-project/live', datasetIds: chIds, base });
      chGenerated = size;
      const generatedMs = performance.now() - t;
      // Like DuckDB's CHECKPOINT: measure the table as it settles, not while parts are merging.
      const mergeMs = await hosts.waitForMerges();
      const parts = await hosts.parts();
      const shard = await hosts.select<{ s: string }>(0, `SELECT toString(cityHash64(${`'${tenantKey(seeded.tenant)}'`}) % ${hosts.clients.length} + 1) AS s`);
      console.log(
        `\n${fmt(size)} events on ClickHouse (generated in ${fmt(generatedMs / 1000, 1)} s, merges settled ${fmt(mergeMs / 1000, 1)} s later: ` +
          `${parts.parts} parts, ${fmt(parts.bytes / 1e6)} MB; the bench tenant's 90% live on shard ${shard[0]?.s ?? '?'})`,
      );

      const now = Date.now();
      const loadBefore = os.loadavg()[0]!;
      const measureStarted = performance.now();
      const rawSamples = new Map<string, number[]>(queries.map((q) => [q.name, []]));
      const httpSamples = new Map<string, number[]>(queries.map((q) => [q.name, []]));
      const shapes = new Map<string, string>();
      const rawCounts = new Map<string, number>();
      const perPhase = Math.max(1, Math.ceil(runs / phases));
      for (let phase = 0; phase < phases; phase++) {
        for (const { name, q } of queries) {
          const call = rawCall(q, now);
          rawCounts.set(name, await call());
          rawSamples.get(name)!.push(...(await time(perPhase, call, chWarmups)));
        }
        for (const { name, q } of queries) {
          const sample = await client.post(q);
          shapes.set(name, sample.events ? `${sample.events.length} events` : sample.stats ? `${sample.stats.length} stats rows` : `${sample.groups!.length} groups`);
          httpSamples.get(name)!.push(...(await time(perPhase, () => client.post(q), chWarmups)));
        }
      }
      console.log(`  (measured in ${fmt((performance.now() - measureStarted) / 1000)} s; machine load average ${fmt(loadBefore, 1)} before, ${fmt(os.loadavg()[0]!, 1)} after, on 2 cores)`);
      const sizeResult: SizeResult = new Map();
      results.set(size, sizeResult);
      for (const { name, q } of queries) {
        const h = median(httpSamples.get(name)!);
        const r = median(rawSamples.get(name)!);
        sizeResult.set(name, { http: h, raw: r, shape: shapes.get(name)! });
        const mismatch = String(rawCounts.get(name)) === shapes.get(name)!.split(' ')[0] ? '' : `; raw gave ${rawCounts.get(name)}!`;
        console.log(
          `  ${name.padEnd(22)} http ${fmt(h, 1).padStart(8)} ms   clickhouse ${fmt(r, 1).padStart(8)} ms   ratio ${fmt(h / r, 2)}×   (${shapes.get(name)}${mismatch}; q: ${q})`,
        );
      }
      // The statements behind each figure, timed one by one (one more run of each, traced).
      for (const { name, q } of queries) {
        const trace = await traceStatements(engine, rawCall(q, now));
        console.log(`    ${name}: ${trace.length} statement${trace.length === 1 ? '' : 's'}: ${trace.map((s) => `${fmt(s.ms, 1)}`).join(' + ')} ms`);
        if (process.env.BENCH_VERBOSE) for (const s of trace) console.log(`      ${fmt(s.ms, 1)} ms  ${abbreviate(s.sql)}`);
      }
      // Hot payload keys, as on DuckDB: a server restarted on the filled columns.
      client.close();
      chServer = await clickHouseHotKeyRows(chServer, seeded, hosts, size, async (defaults) => {
        await chServer!.close();
        chServer = await startServer(serverEnv(chDir, { OPS_EVENTS_URL: url, ...(defaults ? {} : noBackground) }), { logger: false });
        return chServer;
      });
      client = httpClient(chServer.apiUrl, seeded.token);
    }
    client.close();
  } finally {
    await engine?.close();
    await chServer?.close();
    await hosts.close();
    await dropClickHouseDatabase(url);
    fs.rmSync(chDir, { recursive: true, force: true });
  }
  return results;
}

/**
 * Hot payload keys on ClickHouse: bench:query's DuckDB "hot payload keys" rows on
 * the ClickHouse server, HTTP medians of each pair with the keys read from the flattened arrays;
 * then with the default settings (the server receives events again and its background task
 * chooses the keys and fills the older rows by mutations: waitForDefaults); then with `map`,
 * `ping` and `round` pinned on the three datasets through the server's store and the generated
 * rows' slot columns filled by a mutation on each shard with what the loader writes (the
 * backfill's own assignments), on a server restarted so that its engine asks the table which
 * layouts the rows carry. Bytes per event from system.columns.
 */
async function clickHouseHotKeyRows(
  running: Awaited<ReturnType<typeof startServer>>,
  seeded: Awaited<ReturnType<typeof seed>>,
  hosts: ClickHouseHosts,
  size: number,
  restart: (defaults: boolean) => Promise<Awaited<ReturnType<typeof startServer>>>,
): Promise<Awaited<ReturnType<typeof startServer>>> {
  const measure = async (server: Awaited<ReturnType<typeof startServer>>) => {
    const samples = new Map<string, number[]>(hotPairs.map(([name]) => [name, []]));
    const client = httpClient(server.apiUrl, seeded.token);
    for (let phase = 0; phase < phases; phase++) {
      for (const [name, q] of hotPairs) samples.get(name)!.push(...(await time(Math.max(1, Math.ceil(runs / phases)), () => client.post(q), chWarmups)));
    }
    client.close();
    return new Map([...samples].map(([name, list]) => [name, median(list)]));
  };
  const columnBytes = async () => {
    let all = 0;
    let hot = 0;
    for (let h = 0; h < hosts.clients.length; h++) {
      const rows = await hosts.select<{ name: string; b: string }>(
        h,
        `SELECT name, toString(data_compressed_bytes) AS b FROM system.columns WHERE database = '${hosts.database}' AND table = '${hosts.localTable.split('.')[1]}'`,
      );
      for (const r of rows) {
        all += Number(r.b);
        if (r.name.startsWith('hot_')) hot += Number(r.b);
      }
    }
    return { all, hot };
  };
  const json = await measure(running);
  let server = await restart(true);
  const idle = await waitForDefaults(server, seeded.tenant, seeded.datasetIds, seeded.token);
  // As idle as the pinned phase below: the background mutations' parts merged (an idle product's
  // state minutes after the filling), so the two differ only in who chose and filled.
  await hosts.waitForMerges();
  const def = await measure(server);
  server = await restart(false);
  const chIds = [...seeded.datasetIds.values()];
  for (const id of chIds) {
    await server.events.store.setHotKeys(seeded.tenant, id, [
      { pointer: '/map', type: 'string' },
      { pointer: '/ping', type: 'number' },
      { pointer: '/round', type: 'number' },
    ]);
  }
  const t = performance.now();
  const layouts = await hosts.select<{ id: number; dataset_id: string; slots: string }>(0, `SELECT id, dataset_id, slots FROM ${hosts.database}.event_hot_layouts ORDER BY id`);
  const latest = new Map(layouts.map((l) => [l.dataset_id, l]));
  for (let h = 0; h < hosts.clients.length; h++) {
    for (const [datasetId, layout] of latest) {
      const slots = JSON.parse(layout.slots) as HotSlot[];
      const set = slots.flatMap((s) => slotAssignments(s.slot, s.pointer));
      await hosts.command(h, `ALTER TABLE ${hosts.localTable} UPDATE hot_layout = ${Number(layout.id)}, ${set.join(', ')} WHERE dataset_id = '${datasetId}'`);
    }
  }
  for (let h = 0; h < hosts.clients.length; h++) {
    for (;;) {
      const [row] = await hosts.select<{ n: string }>(h, `SELECT count() AS n FROM system.mutations WHERE database = '${hosts.database}' AND is_done = 0`);
      if (Number(row?.n ?? 0) === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  await hosts.waitForMerges();
  const fillMs = performance.now() - t;
  const bytes = await columnBytes();
  server = await restart(false);
  const hot = await measure(server);
  printHotRows(' on ClickHouse', { json, def, pinned: hot }, idle, `pinned: map, ping, round through the store, the rows filled by mutations in ${fmt(fillMs / 1000, 1)} s`);
  const total = await hosts.count();
  console.log(
    `    bytes per event (compressed, system.columns): ${fmt((bytes.all - bytes.hot) / total, 1)} without hot columns, ${fmt(bytes.all / total, 1)} with 3 (${fmt((bytes.all / (bytes.all - bytes.hot) - 1) * 100, 1)}% more; ${fmt(size)} generated)`,
  );
  return server;
}
