/**
 * SOQL in SQL, for the events engines: the dispatch on the engine's dialect (DuckDB:
 * duckdb/duckdb-soql.ts; ClickHouse 18.16 and later: clickhouse/clickhouse-soql.ts,
 * docs/soql-clickhouse.md), the hot reads of a query, and the restriction to the tenant's
 * active datasets. The language itself (parser, predicate) is src/soql.
 *
 *   const { where, params } = compileFilter(query, { now, datasetIds }, dialect);
 *   const key = compileGroupKey(query.groupBy, dialect, hot);
 */
import type { CompiledGroupKey, SqlDialect } from './event-store.js';
import { payloadPaths, type FieldRef, type SoqlQuery } from '../soql/ast.js';
import { readScope, jsonPointer } from '../soql/scope.js';
import { compileClickHouseFilter } from './clickhouse/clickhouse-soql.js';
import { compileClickHouseGroupKey } from './clickhouse/clickhouse-soql-group.js';
import { clickHouseHotReadsOf, noClickHouseHotReads, type ClickHouseHotReads } from './clickhouse/clickhouse-soql-hot.js';
import { compileDuckDbFilter } from './duckdb/duckdb-soql.js';
import { compileDuckDbGroupKey } from './duckdb/duckdb-soql-group.js';
import { hotReadsOf, type HotReads } from './duckdb/duckdb-soql-hot.js';
import type { HotLayout } from './hot-columns.js';
import type { CompileContext, SqlParam } from './soql-sql.js';
import type { AnyHotReads } from './soql-stats.js';

export { compileStats, type AnyHotReads, type CompiledStats } from './soql-stats.js';
export { decodeGroupValue, likePattern, type CompileContext, type GroupValue, type SqlFragment, type SqlParam } from './soql-sql.js';
export { compileDuckDbFilter } from './duckdb/duckdb-soql.js';
export { compileDuckDbGroupKey } from './duckdb/duckdb-soql-group.js';
export { hotReadsOf, noHotReads, stillHolds, type HotReads } from './duckdb/duckdb-soql-hot.js';
export { compileClickHouseFilter } from './clickhouse/clickhouse-soql.js';
export { compileClickHouseGroupKey } from './clickhouse/clickhouse-soql-group.js';
export { clickHouseHotReadsOf, noClickHouseHotReads, type ClickHouseHotReads } from './clickhouse/clickhouse-soql-hot.js';

/** The query's filter in the dialect's SQL (not_found for a dataset the map lacks). */
export function compileFilter(query: SoqlQuery, ctx: CompileContext, dialect: SqlDialect): { where: string; params: SqlParam[] } {
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
 * (duckdb-soql-hot.ts); ClickHouse only for the keys every row in the query's scope has, with the
 * `group by` key's types unless `withJson` (clickhouse-soql-hot.ts).
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
