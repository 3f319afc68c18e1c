// Profile (docs/decisions.md "SOQL stats"): variants of the SQL of
// `stats p95(payload.ping) by source` and of payload conditions, straight on DuckDB with the
// event store's settings, over bench:query's generated events (same distribution; the tenant
// holds 90%). `npx tsx bench/stats-profile.ts`; the variants run interleaved (one run of each
// per round, in random order) so that drift in the machine's load hits all alike, and each
// figure is the median wall time and the median CPU time of the process (DuckDB's threads
// included): on a machine shared with other work, CPU time is the steadier measure.
// PROFILE_DB (default /tmp/p95prof/events.duckdb) is generated once (PROFILE_SIZE rows) and
// reused; PROFILE_RUNS rounds (5); PROFILE_THREADS (2, the store's); PROFILE_ONLY a regex of
// variant names; PROFILE_TYPED=1 adds a DOUBLE column for payload.ping (changes the file).
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { eventsTableDdl } from '../src/engine/event-columns.js';
import { eventStoreSettings } from '../src/engine/duckdb/duckdb-tables.js';
import { parseSoql } from '../src/soql/index.js';
import { compileDuckDbFilter, compileStats } from '../src/engine/soql-compile.js';

const size = Number(process.env.PROFILE_SIZE ?? 10_000_000);
const file = process.env.PROFILE_DB ?? '/tmp/p95prof/events.duckdb';
const runs = Number(process.env.PROFILE_RUNS ?? 5);
const threads = Number(process.env.PROFILE_THREADS ?? 2);
const only = process.env.PROFILE_ONLY ? new RegExp(process.env.PROFILE_ONLY) : null;
fs.mkdirSync(path.dirname(file), { recursive: true });
const fresh = !fs.existsSync(file);
const instance = await DuckDBInstance.create(file, eventStoreSettings(path.join(path.dirname(file), 'tmp'), { threads }));
const c = await instance.connect();
const ids = ['ds-a', 'ds-b', 'ds-c'];
if (fresh) {
  const t = performance.now();
  await c.run(eventsTableDdl);
  for (let from = 0; from < size; from += 1_000_000) {
    await c.run(
      `INSERT INTO events SELECT
         i, CASE WHEN i % 10 = 9 THEN 1000 ELSE 1 END,
         CASE i % 3 WHEN 0 THEN 'ds-a' WHEN 1 THEN 'ds-b' ELSE 'ds-c' END,
         uuid(), 1000 + i * 60, 1000 + i * 60 + 5,
         (hash(i) % 5)::UTINYINT, 'evt.' || (i % 50),
         CASE WHEN i % 7 = 0 THEN NULL ELSE 'player-' || (i % 10000) END,
         'srv-' || (i % 20), 'message number ' || i,
         json_object('map', ['dust', 'nuke', 'inferno', 'mirage', 'vertigo'][(i % 5) + 1], 'ping', (i * 7919) % 400, 'round', i % 30)::VARCHAR,
         200
       FROM range(${from}, ${Math.min(size, from + 1_000_000)}) t(i)`,
    );
  }
  await c.run('CHECKPOINT');
  console.log(`generated ${size} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

// PROFILE_TYPED=1: a materialised DOUBLE column for payload.ping (a typed column for a hot key).
if (process.env.PROFILE_TYPED) {
  const has = (await c.runAndReadAll("SELECT count(*) FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'ping_num'")).getRows()[0]![0];
  if (Number(has) === 0) {
    const t = performance.now();
    await c.run('ALTER TABLE events ADD COLUMN ping_num DOUBLE');
    await c.run("UPDATE events SET ping_num = TRY_CAST(json_extract(payload, '/ping')::VARCHAR AS DOUBLE)");
    await c.run('CHECKPOINT');
    console.log(`ping_num filled in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
}
const where = `tenant = ? AND (dataset_id IN (?, ?, ?) AND (TRUE))`;
const wp: DuckDBValue[] = [1, ...ids];
const NUM = "('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')";
const q = (x: string, agg = 'quantile_cont', level = '0.95') =>
  `SELECT source AS k0, ${agg}(${x}, ${level}) AS v0 FROM events WHERE ${where} GROUP BY k0 ORDER BY v0 DESC NULLS LAST, k0 ASC NULLS LAST LIMIT 1000`;
const by = (agg: string) => `SELECT source AS k0, ${agg} AS v0 FROM events WHERE ${where} GROUP BY k0 ORDER BY v0 DESC LIMIT 1000`;

// The expression stats.ts compiles now (one `?`: the pointer), and a json_type-guarded one it is compared with.
const compiled = compileStats(parseSoql('stats p95(payload.ping) by source').stats!, 'duckdb').values[0]!;
const now = compiled.sql.replace(/^quantile_cont\((.*), 0\.95\)$/, '$1');
const before = `CASE WHEN TRY(json_type(payload, ?)) IN ${NUM} THEN TRY_CAST(TRY(json_extract(payload, ?)) AS DOUBLE) END`;
const literal = (sql: string) => sql.replace(/\?/g, "'/ping'");

// A numeric payload condition over every row (a count: no top-N cuts it short), as compiled
// now and with a json_type guard on its number branch.
const numeric = compileDuckDbFilter(parseSoql('payload.ping > 350'), { now: Date.now(), datasetIds: new Map() });
const numericBefore =
  `COALESCE((TRY(json_type(payload, ?)) = 'VARCHAR' AND TRY(json_extract_string(payload, ?)) > ?) OR ` +
  `(TRY(json_type(payload, ?)) IN ${NUM} AND TRY_CAST(TRY(json_extract(payload, ?)) AS DOUBLE) > CAST(? AS DOUBLE)), FALSE)`;
const count = (w: string) => `SELECT count(*) FROM events WHERE ${where} AND (${w})`;

// bench:query's payload filter (a page) and payload group-by: pointers bound (?) and inlined.
const filter = compileDuckDbFilter(parseSoql('payload.ping > 350 AND payload.map:dust'), { now: Date.now(), datasetIds: new Map() });
const inlinePointers = (sql: string, params: DuckDBValue[]) => {
  let i = 0;
  const kept: DuckDBValue[] = [];
  const text = sql.replace(/\?/g, () => {
    const p = params[i++]!;
    if (typeof p === 'string' && p.startsWith('/')) return `'${p}'`;
    kept.push(p);
    return '?';
  });
  return { sql: text, params: kept };
};
const page = (w: string) => `SELECT seq FROM events WHERE ${where} AND (${w}) ORDER BY ts DESC LIMIT 101`;
const inlined = inlinePointers(filter.where, filter.params as DuckDBValue[]);
const groupMap = (k: string) => `SELECT ${k} AS value, count(*) AS n FROM events WHERE ${where} AND (severity >= 2) GROUP BY 1 ORDER BY n DESC, value ASC NULLS LAST LIMIT 100`;
const mapKey = "NULLIF(TRY(json_extract(payload, ?))::VARCHAR, 'null')";

const variants: Array<{ name: string; sql: string; params: DuckDBValue[] }> = [
  { name: 'p95 before (json_type guard + json_extract), ? pointers', sql: q(before), params: ['/ping', '/ping', ...wp] },
  { name: 'p95 before, literal pointers', sql: q(literal(before)), params: wp },
  { name: 'p95 now (one json_extract, text cast), ? pointer', sql: q(now), params: ['/ping', ...wp] },
  { name: 'p95 now, literal pointer', sql: q(literal(now)), params: wp },
  { name: 'p95 now without TRY', sql: q(now.replace('TRY(json_extract(payload, ?))', 'json_extract(payload, ?)')), params: ['/ping', ...wp] },
  { name: 'p95 now, JSONPath $.ping literal', sql: q(now.replace('?', "'$.ping'")), params: wp },
  { name: 'p95 of json_extract_string (reads "150" too)', sql: q('TRY_CAST(json_extract_string(payload, ?) AS DOUBLE)'), params: ['/ping', ...wp] },
  { name: 'p95 of ->> (reads "150" too)', sql: q("TRY_CAST(payload->>'$.ping' AS DOUBLE)"), params: wp },
  { name: 'p95 of json_value (reads "150" too)', sql: q('TRY_CAST(json_value(payload, ?) AS DOUBLE)'), params: ['/ping', ...wp] },
  { name: 'p95 of payload::JSON (before expression)', sql: q(before.replace(/payload/g, 'payload::JSON')), params: ['/ping', '/ping', ...wp] },
  { name: 'quantile_disc, now', sql: q(now, 'quantile_disc'), params: ['/ping', ...wp] },
  { name: 'approx_quantile, now', sql: q(now, 'approx_quantile'), params: ['/ping', ...wp] },
  { name: 'max, now (no percentile)', sql: by(`max(${now})`), params: ['/ping', ...wp] },
  { name: 'p95 of a number without JSON (seq % 400)', sql: q('CAST(seq % 400 AS DOUBLE)'), params: wp },
  { name: 'count by source (scan floor)', sql: by('count(*)'), params: wp },
  { name: 'max(strlen(payload)) by source (reads payload)', sql: by('max(strlen(payload))'), params: wp },
  { name: 'numeric condition before, count', sql: count(numericBefore), params: [...wp, '/ping', '/ping', '350', '/ping', '/ping', '350'] },
  { name: 'numeric condition now, count', sql: count(numeric.where), params: [...wp, ...(numeric.params as DuckDBValue[])] },
  { name: 'payload filter page, ? pointers', sql: page(filter.where), params: [...wp, ...(filter.params as DuckDBValue[])] },
  { name: 'payload filter page, literal pointers', sql: page(inlined.sql), params: [...wp, ...inlined.params] },
  { name: 'group by payload.map, ? pointer', sql: groupMap(mapKey), params: ['/map', ...wp] },
  { name: 'group by payload.map, literal pointer', sql: groupMap(mapKey.replace('?', "'/map'")), params: wp },
];
if (process.env.PROFILE_TYPED) {
  variants.push({ name: 'p95 of a typed DOUBLE column ping_num', sql: q('ping_num'), params: wp });
  variants.push({ name: 'quantile_disc of the typed column', sql: q('ping_num', 'quantile_disc'), params: wp });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const chosen = variants.filter((v) => !only || only.test(v.name));
const wall = new Map<string, number[]>(chosen.map((v) => [v.name, []]));
const cpu = new Map<string, number[]>(chosen.map((v) => [v.name, []]));
const answers = new Map<string, string>();
/** One run on a fresh connection, as the store reads: wall and CPU ms. */
const runOnce = async (v: (typeof chosen)[number]) => {
  const conn = await instance.connect();
  const t = performance.now();
  const cpu0 = process.cpuUsage();
  const rows = (await conn.runAndReadAll(v.sql, v.params)).getRows();
  const used = process.cpuUsage(cpu0);
  const ms = performance.now() - t;
  conn.closeSync();
  answers.set(v.name, JSON.stringify(rows.slice(0, 2), (_, x) => (typeof x === 'bigint' ? Number(x) : x)));
  return { ms, cpu: (used.user + used.system) / 1000 };
};
console.log(`threads=${threads}, ${runs} rounds after a warm-up round; ms: wall median, wall min, CPU median (all threads)`);
for (const v of chosen) await runOnce(v);
for (let k = 0; k < runs; k++) {
  for (const v of [...chosen].sort(() => Math.random() - 0.5)) {
    const r = await runOnce(v);
    wall.get(v.name)!.push(r.ms);
    cpu.get(v.name)!.push(r.cpu);
  }
}
const reference = answers.get(variants[0]!.name);
for (const v of chosen) {
  const w = wall.get(v.name)!;
  const same = v.name.startsWith('p95') && answers.get(v.name) === reference ? '  (same answer as before)' : '';
  console.log(`${median(w).toFixed(0).padStart(6)} ${Math.min(...w).toFixed(0).padStart(6)} ${median(cpu.get(v.name)!).toFixed(0).padStart(6)}  ${v.name}${same}`);
}
c.closeSync();
instance.closeSync();
