/**
 * SOQL, the query language of POST /query, POST /query/tail, the monitors and the explorer
 * (SOQL.md): the lexer, parser, typed tree, printer and the in-memory predicate, with no engine
 * below them. The engines compile a parsed query to their SQL (src/engine/soql-compile.ts).
 *
 *   const query = parseSoql(q);                                   // soql_parse_error / soql_reserved_field
 *   rejectAggregationForTail(query); assertDatasetsExist(query, datasetIds);
 *   const matches = compilePredicate(query, { now });             // live tail
 */
import { AppError } from '../errors/app-error.js';
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
export type { StatsAggregate, StatsByItem, StatsClause } from './ast.js';
export { canonicalFields, payloadPaths, readsClock, withoutPositions } from './ast.js';
export { planStats, statsRowLimit, maxStatsRows, maxBins } from './stats-plan.js';
export { parseSoql, MAX_IN_VALUES, MAX_NESTING, MAX_QUERY_LENGTH, MAX_STATS_AGGREGATES, MAX_STATS_BY } from './parser.js';
export { printSoql, printField, printValue, aggregateText, byItemText } from './print.js';
export { compilePredicate, lookupPayload, payloadOf, payloadOfText, payloadParsedFor, type EventPredicate, type MemoryEvent, type PredicateContext } from './predicate.js';
export { assertDatasetsExist, datasetIdsFor, jsonPointer, readScope, type ReadScope } from './scope.js';

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
