/**
 * SOQL, the query language of POST /query and POST /query/tail (SOQL.md).
 *
 *   const query = parseSoql(q);                                   // soql_parse_error / soql_reserved_field
 *   const { where, params } = compileDuckDbFilter(query, { now, datasetIds });   // POST /query
 *   rejectAggregationForTail(query); assertDatasetsExist(query, datasetIds);
 *   const matches = compilePredicate(query, { now });             // live tail
 */
import { AppError } from '../../errors/app-error.js';
import type { SoqlQuery } from './ast.js';

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
export { canonicalFields, withoutPositions } from './ast.js';
export { parseSoql, MAX_IN_VALUES, MAX_NESTING, MAX_QUERY_LENGTH } from './parser.js';
export { printSoql, printField, printValue } from './print.js';
export { compilePredicate, type EventPredicate, type MemoryEvent, type PredicateContext } from './predicate.js';
export {
  assertDatasetsExist,
  compileDuckDbFilter,
  type DuckDbContext,
  type SqlFragment,
  type SqlParam,
} from './duckdb.js';
export { compileDuckDbGroupKey, decodeGroupValue, type GroupValue } from './duckdb-group.js';

/** Live tail streams events; it cannot aggregate (SPEC.md §4.2). */
export function rejectAggregationForTail(query: SoqlQuery): void {
  if (query.groupBy) {
    throw new AppError(
      'soql_tail_aggregation_unsupported',
      'live tail cannot run a group by query: remove the group by clause, or use POST /query',
    );
  }
}
