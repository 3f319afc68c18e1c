// npx tsx bench/threshold-statements.ts — the DuckDB statements of bench:monitors' 1,000 threshold
// monitors, in-process CPU (process.cpuUsage: every thread, DuckDB's included) per statement,
// over BENCH_EVENTS (10M) events generated like bench:monitors' (the 24 h up to the generation, 90%
// the tenant's, three datasets with ids of the real length), kept in BENCH_DIR between runs.
// Each distinct statement runs with the active datasets as `dataset_id IN (…)` (before session
// 18) and as `withinDatasets` writes it now, alternating, BENCH_REPS times (medians). Then per
// minute: one statement per monitor (before), and one per distinct (q, window) in each batch of
// 50 consecutive monitors (the scheduler's batches: evaluator.ts windowValues).
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { schemaSql, tenantWhere } from '../src/engine/duckdb/duckdb-sql.js';
import { eventStoreSettings } from '../src/engine/duckdb/duckdb-tables.js';
import { parseSoql, planStats, statsRowLimit } from '../src/soql/index.js';
import { compileDuckDbFilter, compileStats, withinDatasets } from '../src/engine/soql-compile.js';
import { statsSelect } from '../src/engine/event-store.js';
import { withinWindow } from '../src/monitors/window-query.js';

const dir = process.env.BENCH_DIR ?? '/tmp/bench-threshold-statements';
const count = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const ids = ['ds_01JDX6Q8ZKM3V7T2R9N4B5C6D7', 'ds_01JDX6Q8ZKM3V7T2R9N4B5C6D8', 'ds_01JDX6Q8ZKM3V7T2R9N4B5C6D9'];
const fresh = !fs.existsSync(path.join(dir, 'end'));
fs.mkdirSync(dir, { recursive: true });
const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'), eventStoreSettings(path.join(dir, 'tmp')));
const c = await instance.connect();
if (fresh) {
  const end = Date.now();
  await c.run(schemaSql);
  const spacing = 86_400_000 / count;
  for (let from = 0; from < count; from += 1_000_000) {
    await c.run(`INSERT INTO events SELECT 0, CASE WHEN i % 10 = 9 THEN 1000 ELSE 1 END, CASE i % 3 WHEN 0 THEN '${ids[0]}' WHEN 1 THEN '${ids[1]}' ELSE '${ids[2]}' END,
         uuid(), ${end - 86_400_000} + floor(i * ${spacing})::BIGINT, ${end - 86_400_000} + floor(i * ${spacing})::BIGINT + 5,
         (hash(i) % 5)::UTINYINT, 'evt.' || (i % 50), CASE WHEN i % 7 = 0 THEN NULL ELSE 'player-' || (i % 10000) END,
         'srv-' || (i % 20), 'message number ' || i,
         json_object('map', ['dust', 'nuke', 'inferno', 'mirage', 'vertigo'][(i % 5) + 1], 'ping', (i * 7919) % 400, 'round', i % 30)::VARCHAR, 200
       FROM range(${from}, ${Math.min(count, from + 1_000_000)}) t(i)`);
  }
  await c.run('CHECKPOINT');
  fs.writeFileSync(path.join(dir, 'end'), String(end));
}
const now = Number(fs.readFileSync(path.join(dir, 'end'), 'utf8')) - 1000;
const datasetIds = new Map([['game', ids[0]!], ['auth', ids[1]!], ['matchmaking', ids[2]!]]);
const win = (w: string) => ({ '1m': 60_000, '5m': 300_000, '15m': 900_000, '1h': 3_600_000, '24h': 86_400_000 })[w]!;
function monitor(k: number): [string, string] {
  const shapes: Array<[string, string]> = [
    ['severity >= error stats count() by source', '5m'],
    [`event == "evt.${k % 50}" stats count()`, '5m'],
    ['stats p95(payload.ping) by source', '15m'],
    ['payload.map:dust AND severity >= warn stats count() by source', '15m'],
    ['stats avg(payload.ping)', '1h'],
    [`source:srv-${k % 20} stats count() by event`, '1h'],
    ['severity >= warn stats count() by payload.map', '5m'],
    [`event == "evt.${k % 50}" AND payload.ping > 300 stats count()`, '1m'],
    ['stats max(payload.round) by source', '5m'],
    ['severity >= error stats count() by source', '24h'],
  ];
  return shapes[k % 10]!;
}
function sql(q: string, w: string, old: boolean) {
  const parsed = planStats(parseSoql(q), q, now);
  const query = { ...parsed, filter: withinWindow(parsed, now - win(w), now) };
  const compiled = compileDuckDbFilter(query, { now, datasetIds });
  const within = old ? { where: `dataset_id IN (?, ?, ?) AND (${compiled.where})`, params: [...ids, ...compiled.params] } : withinDatasets(compiled, ids, 'duckdb');
  const stats = { filter: { where: '', params: [] }, ...compileStats(query.stats!, 'duckdb'), limit: statsRowLimit(query.stats!) };
  const select = statsSelect(stats);
  return { sql: `SELECT ${select.select} FROM events WHERE ${tenantWhere} AND (${within.where})${select.groupBy} ORDER BY ${stats.orderBy} LIMIT ${stats.limit}`, params: [...(select.params as DuckDBValue[]), 1, ...within.params] };
}
const distinct = new Map<string, [string, string]>();
for (let k = 0; k < 1000; k++) distinct.set(monitor(k).join('|'), monitor(k));
const reps = Number(process.env.BENCH_REPS ?? 3);
const cost = { old: new Map<string, number[]>(), new: new Map<string, number[]>() };
for (let r = 0; r < reps; r++)
  for (const [key, [q, w]] of distinct)
    for (const variant of (r % 2 ? ['new', 'old'] : ['old', 'new']) as Array<'old' | 'new'>) {
      const s = sql(q, w, variant === 'old');
      if (r === 0) await c.runAndReadAll(s.sql, s.params);
      const cpu0 = process.cpuUsage();
      await c.runAndReadAll(s.sql, s.params);
      const u = process.cpuUsage(cpu0);
      if (!cost[variant].has(key)) cost[variant].set(key, []);
      cost[variant].get(key)!.push((u.user + u.system) / 1000);
          }
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
// Old: every monitor one statement. New: one per distinct (q, window) in each batch of 50 consecutive monitors.
let oldTotal = 0;
let newTotal = 0;
let oldStatements = 0;
let newStatements = 0;
let newUnshared = 0;
for (let b = 0; b < 1000; b += 50) {
  const seen = new Set<string>();
  for (let k = b; k < b + 50; k++) {
    const key = monitor(k).join('|');
    oldTotal += med(cost.old.get(key)!);
    oldStatements++;
    newUnshared += med(cost.new.get(key)!);
    if (seen.has(key)) continue;
    seen.add(key);
    newTotal += med(cost.new.get(key)!);
    newStatements++;
  }
}
for (const [key] of distinct) console.log(`${key.padEnd(70)} old ${med(cost.old.get(key)!).toFixed(1)} new ${med(cost.new.get(key)!).toFixed(1)} ms CPU`);
console.log(`per minute (1,000 monitors): old ${oldStatements} statements ${(oldTotal / 1000).toFixed(1)} s CPU = ${(oldTotal / 1000).toFixed(1)} ms/evaluation; list_contains alone ${(newUnshared / 1000).toFixed(1)} ms/evaluation; with one read per batch ${newStatements} statements ${(newTotal / 1000).toFixed(1)} ms/evaluation`);
c.closeSync();
