import path from 'node:path';
import fs from 'node:fs';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { eventStoreSettings } from '../src/engine/duckdb/duckdb-tables.js';
import { tenantWhere } from '../src/engine/duckdb/duckdb-sql.js';
import { compileDuckDbFilter, compileStats, parseSoql, planStats, statsRowLimit, withinDatasets } from '../src/query/soql/index.js';
import { statsSelect } from '../src/engine/event-store.js';
import { withinWindow } from '../src/monitors/window-query.js';
const dir = '/tmp/bench-threshold-statements';
const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'), eventStoreSettings(path.join(dir, 'tmp')));
const c = await instance.connect();
const now = Number(fs.readFileSync(path.join(dir, 'end'), 'utf8')) - 1000;
const ids = ['ds_01JDX6Q8ZKM3V7T2R9N4B5C6D7', 'ds_01JDX6Q8ZKM3V7T2R9N4B5C6D8', 'ds_01JDX6Q8ZKM3V7T2R9N4B5C6D9'];
const datasetIds = new Map([['game', ids[0]!], ['auth', ids[1]!], ['matchmaking', ids[2]!]]);
const q = `event == "evt.7" AND payload.ping > 300 stats count()`;
const parsed = planStats(parseSoql(q), q, now);
const query = { ...parsed, filter: withinWindow(parsed, now - 60_000, now) };
const compiled = compileDuckDbFilter(query, { now, datasetIds });
const within = withinDatasets(compiled, ids, 'duckdb');
const stats = { filter: { where: '', params: [] }, ...compileStats(query.stats!, 'duckdb'), limit: statsRowLimit(query.stats!) };
const select = statsSelect(stats);
const full = { sql: `SELECT ${select.select} FROM events WHERE ${tenantWhere} AND (${within.where})${select.groupBy} ORDER BY ${stats.orderBy} LIMIT ${stats.limit}`, params: [...(select.params as DuckDBValue[]), 1, ...within.params] };
console.log(full.sql, JSON.stringify(full.params));
const variants: Record<string, { sql: string; params: DuckDBValue[] }> = {
  full,
  noDatasets: { sql: `SELECT ${select.select} FROM events WHERE ${tenantWhere} AND (${compiled.where})${select.groupBy} ORDER BY ${stats.orderBy} LIMIT ${stats.limit}`, params: [...(select.params as DuckDBValue[]), 1, ...compiled.params] as DuckDBValue[] },
  noOrder: { sql: `SELECT ${select.select} FROM events WHERE ${tenantWhere} AND (${within.where})${select.groupBy}`, params: full.params },
  inlined: { sql: full.sql, params: full.params },
};
// inlined: parameters substituted as literals
let k = 0;
variants.inlined = { sql: full.sql.replace(/\?/g, () => { const v = full.params[k++]; return typeof v === 'string' ? `'${v}'` : Array.isArray(v) ? `[${(v as string[]).map((x) => `'${x}'`).join(',')}]` : String(v); }), params: [] };
const prepared = await c.prepare(full.sql);
for (const [name, v] of Object.entries(variants)) {
  const xs: number[] = [];
  for (let i = 0; i < 21; i++) {
    const u0 = process.cpuUsage();
    await c.runAndReadAll(v.sql, v.params.length ? v.params : undefined);
    const u = process.cpuUsage(u0);
    xs.push((u.user + u.system) / 1000);
  }
  xs.sort((a, b) => a - b);
  console.log(name.padEnd(14), 'median CPU ms', xs[10]!.toFixed(2));
}
{
  const xs: number[] = [];
  for (let i = 0; i < 21; i++) {
    prepared.bind(full.params as never);
    const u0 = process.cpuUsage();
    await prepared.runAndReadAll();
    const u = process.cpuUsage(u0);
    xs.push((u.user + u.system) / 1000);
  }
  xs.sort((a, b) => a - b);
  console.log('prepared'.padEnd(14), 'median CPU ms', xs[10]!.toFixed(2));
}
