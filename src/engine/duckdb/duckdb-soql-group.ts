/**
 * `group by` for the DuckDB back end: the one implementation POST /query runs (the query
 * service hands the compiled key to the event store's `aggregate`, and decodes its rows here).
 * The key expression returns raw column values (a dataset_id rather than its name, a severity
 * index, epoch milliseconds; a payload value as its JSON text) so grouping stays cheap;
 * `decodeGroupValue` turns each group's key into the API's `value` afterwards. Events missing
 * the field give a NULL key: one group with `value: null` (DECISIONS.md §9).
 */
import type { CompiledGroupKey } from '../event-store.js';
import type { FieldRef } from '../../soql/ast.js';
import { jsonPointer } from '../../soql/scope.js';
import { hotGroupKey, noHotReads, type HotReads } from './duckdb-soql-hot.js';

/**
 * The SQL expression to GROUP BY. A payload value comes out as its JSON text as DuckDB writes
 * it (compact; object keys in the order the event sent them), so every JSON type groups, and
 * 150 and "150" are two groups; a JSON null groups with the missing values, and so does every
 * value of a payload DuckDB's JSON reader refuses (TRY; see `json` in duckdb-soql.ts). Ingest stored
 * the payload as JSON.stringify wrote it, so one number is always spelt one way (150.0 and
 * 1.5e2 arrived as 150). `dataset` comes out as the dataset_id. The path is a `?` parameter
 * (a JSON pointer), like every payload path of the filter.
 */
export function compileDuckDbGroupKey(field: FieldRef, hot: HotReads = noHotReads): CompiledGroupKey {
  if (field.kind === 'payload') {
    const pointer = jsonPointer(field.path);
    // The pointer is a parameter only when the JSON is read (not when the column alone is).
    const params: string[] = [];
    const sql = hotGroupKey(hot, pointer, () => {
      params.push(pointer);
      return "NULLIF(TRY(json_extract(payload, ?))::VARCHAR, 'null')";
    });
    return { sql, params };
  }
  switch (field.name) {
    case 'dataset':
      return { sql: 'dataset_id', params: [] };
    case 'event_id':
      return { sql: 'CAST(event_id AS VARCHAR)', params: [] };
    default:
      return { sql: field.name, params: [] };
  }
}
