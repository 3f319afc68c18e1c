/**
 * SOQL, the query language of POST /query and POST /query/tail (SOQL.md).
 *
 *   const query = parseSoql(q);                                   // soql_parse_error / soql_reserved_field
 *   const { where, params } = compileDuckDbFilter(query, { now, datasetIds });   // POST /query
 *   rejectAggregationForTail(query); assertDatasetsExist(query, datasetIds);
 *   const matches = compilePredicate(query, { now });             // live tail
 *
 * The events engine picks the SQL dialect: compileFilter / compileGroupKey dispatch on it
 * (DuckDB: duckdb.ts; ClickHouse 18.16 and later: clickhouse.ts, docs/soql-clickhouse.md).
 */
import { AppError } from '../errors/app-error.js';
import type { CompiledGroupKey } from '../engine/event-store.js';
import { payloadPaths, type FieldRef, type SoqlQuery } from './ast.js';
import { compileClickHouseFilter } from '../engine/clickhouse/clickhouse-soql.js';
import { compileClickHouseGroupKey } from '../engine/clickhouse/clickhouse-soql-group.js';
import { compileDuckDbFilter, jsonPointer, type DuckDbContext, type SqlParam } from '../engine/duckdb/duckdb-soql.js';
import { compileDuckDbGroupKey } from '../engine/duckdb/duckdb-soql-group.js';
import type { HotReads } from '../engine/duckdb/duckdb-soql-hot.js';
import { clickHouseHotReadsOf, noClickHouseHotReads, readScope, type ClickHouseHotReads } from '../engine/clickhouse/clickhouse-soql-hot.js';
import { hotReadsOf } from '../engine/duckdb/duckdb-soql-hot.js';
import type { HotLayout } from '../engine/hot-columns.js';
import type { AnyHotReads } from '../engine/soql-stats.js';

export type {
  CanonicalField,
  CompareOp,
  Expr,
  FieldRef,
  SoqlQuery,
  TimeUnit,
  TimeValue,
  Value,
} from './ast.js';
export type { StatsAggregate, StatsByItem, StatsClause } from './ast.js';
export { canonicalFields, payloadPaths, readsClock, withoutPositions } from './ast.js';
export { compileStats, planStats, statsRowLimit, maxStatsRows, maxBins, type CompiledStats } from '../engine/soql-stats.js';
export { parseSoql, MAX_IN_VALUES, MAX_NESTING, MAX_QUERY_LENGTH, MAX_STATS_AGGREGATES, MAX_STATS_BY } from './parser.js';
export { printSoql, printField, printValue, aggregateText, byItemText } from './print.js';
export { compilePredicate, lookupPayload, payloadOf, payloadOfText, payloadParsedFor, type EventPredicate, type MemoryEvent, type PredicateContext } from './predicate.js';
export {
  assertDatasetsExist,
  compileDuckDbFilter,
  type DuckDbContext,
  type SqlFragment,
  type SqlParam,
} from '../engine/duckdb/duckdb-soql.js';
export { compileDuckDbGroupKey, decodeGroupValue, type GroupValue } from '../engine/duckdb/duckdb-soql-group.js';
export { compileClickHouseFilter } from '../engine/clickhouse/clickhouse-soql.js';
export { hotReadsOf, noHotReads, stillHolds, type HotReads } from '../engine/duckdb/duckdb-soql-hot.js';
export { clickHouseHotReadsOf, noClickHouseHotReads, readScope, type ClickHouseHotReads, type ReadScope } from '../engine/clickhouse/clickhouse-soql-hot.js';
export type { AnyHotReads } from '../engine/soql-stats.js';
export { compileClickHouseGroupKey } from '../engine/clickhouse/clickhouse-soql-group.js';

/** The SQL an events engine speaks (declared by the engine, event-store.ts). */
export type { SqlDialect } from '../engine/event-store.js';
import type { SqlDialect } from '../engine/event-store.js';

/** The query's filter in the dialect's SQL (not_found for a dataset the map lacks). */
export function compileFilter(query: SoqlQuery, ctx: DuckDbContext, dialect: SqlDialect): { where: string; params: SqlParam[] } {
  switch (dialect) {
    case 'duckdb':
      return compileDuckDbFilter(query, ctx);
    case 'clickhouse':
      return compileClickHouseFilter(query, ctx);
  }
}

/** The `group by` key expression in the dialect's SQL; decodeGroupValue reads both alike. */
export function compileGroupKey(field: FieldRef, dialect: SqlDialect, hot?: AnyHotReads): CompiledGroupKey {
  const chHot = hot && 'dialect' in hot ? hot : undefined;
  switch (dialect) {
    case 'duckdb':
      return compileDuckDbGroupKey(field, chHot ? undefined : (hot as HotReads | undefined));
    case 'clickhouse':
      return compileClickHouseGroupKey(field, chHot);
  }
}

/**
 * The hot reads of a query in the dialect, from the store's layouts of the query's datasets
 * (EventStore.hotLayouts). DuckDB reads a column per row where it can, and the column alone
 * for the keys no stored row of the query's datasets needs the JSON for, unless `withJson`
 * (duckdb-hot.ts); ClickHouse only for the keys every row in the query's scope has, with the
 * `group by` key's types unless `withJson` (clickhouse-hot.ts).
 */
export function hotReadsFor(
  dialect: SqlDialect,
  layouts: readonly HotLayout[],
  query: SoqlQuery,
  ctx: { now: number; datasetIds: ReadonlyMap<string, string> },
  options: { withJson?: boolean } = {},
): AnyHotReads {
  switch (dialect) {
    case 'duckdb':
      if (options.withJson) return hotReadsOf(layouts);
      return hotReadsOf(layouts, { datasetIds: readScope(query, ctx).datasetIds, pointers: new Set(payloadPaths(query).map(jsonPointer)) });
    case 'clickhouse':
      // The `group by` key's types unless `withJson` (the third attempt: types not relied on).
      if (!layouts.length) return noClickHouseHotReads;
      return clickHouseHotReadsOf(layouts, readScope(query, ctx), !options.withJson && query.groupBy?.kind === 'payload' ? jsonPointer(query.groupBy.path) : undefined);
  }
}

/** The compile context's field for hot reads of either dialect. */
export function hotContext(hot: AnyHotReads | undefined): { hot?: HotReads; clickHouseHot?: ClickHouseHotReads } {
  if (!hot) return {};
  return 'dialect' in hot ? { clickHouseHot: hot } : { hot };
}

/**
 * A compiled filter restricted to the datasets `ids` (the tenant's active ones): an event of an
 * archived or unknown dataset is never read. No dataset: a filter that matches nothing.
 *
 * On DuckDB several ids are tested with `list_contains`, not `IN`: DuckDB 1.5 evaluates
 * `dataset_id IN (?, ?, ?)` as an OR of string comparisons on every row the scan lets through,
 * which was most of a 24 h `count() by source`'s CPU, where list_contains costs a fraction of it
 * (bench/threshold-statements.ts compares the two). The column
 * is NOT NULL, so both select the same rows. One id stays `=`, as cheap and prunable by the
 * row groups' min/max.
 */
export function withinDatasets(filter: { where: string; params: SqlParam[] }, ids: readonly string[], dialect: SqlDialect): { where: string; params: SqlParam[] } {
  if (!ids.length) return { where: dialectFalse(dialect), params: [] };
  const list = ids.map(() => '?').join(', ');
  const test = ids.length === 1 ? 'dataset_id = ?' : dialect === 'duckdb' ? `list_contains([${list}], dataset_id)` : `dataset_id IN (${list})`;
  return { where: `${test} AND (${filter.where})`, params: [...ids, ...filter.params] };
}

/** The dialect's constant for "matches nothing" (ClickHouse 18.16 has no FALSE). */
export function dialectFalse(dialect: SqlDialect): string {
  switch (dialect) {
    case 'duckdb':
      return 'FALSE';
    case 'clickhouse':
      return '0';
  }
}

/** Live tail streams events; it cannot aggregate (SPEC.md §4.2). */
export function rejectAggregationForTail(query: SoqlQuery): void {
  if (query.groupBy || query.stats) {
    const clause = query.groupBy ? 'group by' : 'stats';
    throw new AppError(
      'soql_tail_aggregation_unsupported',
      `live tail cannot run a ${clause} query: remove the ${clause} clause, or use POST /query`,
    );
  }
}
