/**
 * `stats` (SOQL.md "Statistics") for both events engines: the query's time range and bin count
 * checked against `now`, and the SELECT list, grouping keys and order in the engine's dialect.
 * The engine wraps them (`EventStore.stats`) with its table and the tenant's condition, as it
 * does for `group by`; the store's SOQL read decodes the rows (soql-read.ts: decodeGroupValue for fields, ISO
 * times for bins).
 *
 * Semantics, the same on DuckDB and ClickHouse (clickhouse/soql-agreement.test.ts runs both):
 * - by-fields group like `group by` (compileGroupKey: a payload value by its JSON text; a
 *   missing field is one `null` group); a bin is `ts` rounded down to a multiple of its width
 *   since the Unix epoch (UTC), also before 1970.
 * - sum avg min max and the percentiles read the field's numbers only: a payload node that is a
 *   JSON number (not "150" in quotes, not true), or bytes_raw; no number in a group → null.
 * - Percentiles are exact: linear interpolation between the two closest ranks (DuckDB's
 *   quantile_cont, numpy's default), so both engines give the same answer. `count_distinct` is
 *   exact too. Both hold every value of a group in memory, bounded by the engine's per-query
 *   memory limit: a query past it is a 400 asking to narrow it, like a group by.
 */
import type { CompiledGroupKey, SqlDialect } from './event-store.js';
import type { FieldRef, NumericStatsFunction, StatsAggregate, StatsClause } from '../soql/ast.js';
import { binMs } from '../soql/stats-plan.js';
import { compileClickHouseGroupKey } from './clickhouse/clickhouse-soql-group.js';
import { compileDuckDbGroupKey } from './duckdb/duckdb-soql-group.js';
import { duckDbPayloadNumber } from './duckdb/duckdb-soql.js';
import { jsonPointer } from '../soql/scope.js';
import { payloadType } from './clickhouse/payload-paths.js';
import { hotNumber, noHotReads, type HotReads } from './duckdb/duckdb-soql-hot.js';
import { hotColumnOf, type ClickHouseHotReads } from './clickhouse/clickhouse-soql-hot.js';

/** Hot reads of either dialect (duckdb-soql-hot.ts, clickhouse-soql-hot.ts). */
export type AnyHotReads = HotReads | ClickHouseHotReads;
const duckHot = (hot: AnyHotReads): HotReads => ('dialect' in hot ? noHotReads : hot);
const clickHouseHot = (hot: AnyHotReads): ClickHouseHotReads | undefined => ('dialect' in hot ? hot : undefined);

/** The engine's part of a stats query: `SELECT keys…, values… GROUP BY keys ORDER BY orderBy`. */
export interface CompiledStats {
  keys: CompiledGroupKey[];
  values: CompiledGroupKey[];
  /** Over the aliases k0…, v0… the engine gives keys and values. */
  orderBy: string;
}

const percentileLevels: Partial<Record<NumericStatsFunction, number>> = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

const groupKey = (field: FieldRef, dialect: SqlDialect, hot: AnyHotReads): CompiledGroupKey =>
  dialect === 'duckdb' ? compileDuckDbGroupKey(field, duckHot(hot)) : compileClickHouseGroupKey(field, clickHouseHot(hot));

/** A field's numbers: NULL where the event has no number there. */
function numbers(field: FieldRef, dialect: SqlDialect, hot: AnyHotReads): CompiledGroupKey {
  // The parser lets only bytes_raw through among the canonical fields.
  if (field.kind === 'canonical') return { sql: dialect === 'duckdb' ? 'CAST(bytes_raw AS DOUBLE)' : 'toFloat64(bytes_raw)', params: [] };
  const pointer = jsonPointer(field.path);
  // One JSON parse per row, as the filter's number branch reads it.
  if (dialect === 'duckdb') {
    // The pointer is a parameter only when the JSON is read (not when the column alone is).
    const params: string[] = [];
    const sql = hotNumber(duckHot(hot), pointer, () => {
      params.push(pointer);
      return duckDbPayloadNumber('?');
    });
    return { sql, params };
  }
  const [type, number] = [hotColumnOf(clickHouseHot(hot), pointer, 't'), hotColumnOf(clickHouseHot(hot), pointer, 'n')];
  if (type && number) return { sql: `if(${type} = ${payloadType.number}, ${number}, NULL)`, params: [] };
  return {
    sql: `if(arrayElement(payload_types, indexOf(payload_paths, ?)) = ${payloadType.number}, arrayElement(payload_numbers, indexOf(payload_paths, ?)), NULL)`,
    params: [pointer, pointer],
  };
}

/**
 * ClickHouse 18.16 has no interpolating exact quantile (quantileExact takes the element at
 * floor(level × n)): pick the group's two numbers at ranks lo = floor((n − 1) × level) and
 * lo + 1 and interpolate as quantile_cont does. Aliases are global to a ClickHouse statement,
 * so each value gets its own (`_a3`, `_l3`…).
 *
 * Ranks without sorting: `arraySort` compares through a virtual call per
 * comparison, so it was most of a percentile's cost and grew with how varied the numbers are
 * (a constant column sorted far faster than a payload's pings). The number at rank lo is the
 * median, by quantileExact's nth_element (exact: index size / 2 of an even size), of the group's
 * numbers padded with |2 lo − n| copies of −inf (lo below the middle) or +inf (above it), which
 * moves rank lo to the middle without changing any real number's rank; the one at lo + 1 is the
 * same number when more than lo + 1 numbers are ≤ it, else the least number above it.
 * (greatest(n, 1) − 1: both branches of if() are evaluated, also for an empty group, whose
 * n − 1 would wrap around as UInt64.)
 */
function clickHousePercentile(x: CompiledGroupKey, level: number, index: number): CompiledGroupKey {
  const [a, n, pos, lo, pad, at, v] = ['_a', '_n', '_p', '_l', '_e', '_v', '_x'].map((name) => `${name}${index}`) as [string, string, string, string, string, string, string];
  const rank = `(toUInt64(floor(((greatest(${n}, 1) - 1) * ${level}) AS ${pos})) AS ${lo})`;
  const padding = `(if(2 * ${rank} >= ${n}, inf, -inf) AS ${pad})`;
  const atLo = `(arrayReduce('quantileExact(0.5)', arrayConcat(${a}, arrayResize([${padding}], toUInt64(abs(toInt64(2 * ${lo}) - toInt64(${n}))), ${pad}))) AS ${at})`;
  const atNext = `if(${lo} + 1 >= ${n} OR arrayCount(${v} -> ${v} <= ${at}, ${a}) > ${lo} + 1, ${at}, arrayReduce('min', arrayFilter(${v} -> ${v} > ${at}, ${a})))`;
  const sql = `if((length(groupArray(${x.sql}) AS ${a}) AS ${n}) = 0, NULL, ${atLo} + (${pos} - ${lo}) * (${atNext} - ${at}))`;
  return { sql, params: x.params };
}

function aggregateSql(a: StatsAggregate, dialect: SqlDialect, index: number, hot: AnyHotReads): CompiledGroupKey {
  if (a.fn === 'count') return { sql: dialect === 'duckdb' ? 'count(*)' : 'count()', params: [] };
  if (a.fn === 'count_distinct') {
    const key = groupKey(a.field, dialect, hot);
    // ClickHouse answers NULL, not 0, for a group whose values are all NULL.
    return { sql: dialect === 'duckdb' ? `count(DISTINCT ${key.sql})` : `ifNull(count(DISTINCT ${key.sql}), 0)`, params: key.params };
  }
  const x = numbers(a.field, dialect, hot);
  if (a.fn === 'count_numbers') return { sql: `count(${x.sql})`, params: x.params };
  const level = percentileLevels[a.fn];
  if (level !== undefined) {
    return dialect === 'duckdb' ? { sql: `quantile_cont(${x.sql}, ${level})`, params: x.params } : clickHousePercentile(x, level, index);
  }
  return { sql: `${a.fn}(${x.sql})`, params: x.params };
}

/** A bin's key: ts rounded down to a multiple of the width (epoch-aligned, also before 1970). */
const binKey = (width: number): CompiledGroupKey => ({ sql: `(ts - (((ts % ${width}) + ${width}) % ${width}))`, params: [] });

export function compileStats(stats: StatsClause, dialect: SqlDialect, hot: AnyHotReads = noHotReads): CompiledStats {
  const keys = stats.by.map((b) => (b.kind === 'bin' ? binKey(binMs(b)) : groupKey(b.field, dialect, hot)));
  const values = stats.aggregates.map((a, i) => aggregateSql(a, dialect, i, hot));
  // With a bin: by bin, then the first aggregate descending; without: the first aggregate
  // descending; ties by the by-values in their order.
  const binIndex = stats.by.findIndex((b) => b.kind === 'bin');
  const order: string[] = [];
  if (binIndex >= 0) order.push(`k${binIndex} ASC`);
  order.push('v0 DESC NULLS LAST');
  stats.by.forEach((_, i) => i !== binIndex && order.push(`k${i} ASC NULLS LAST`));
  return { keys, values, orderBy: order.join(', ') };
}
