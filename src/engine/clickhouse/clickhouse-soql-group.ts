/**
 * `group by` for the ClickHouse engine: the key expression returns the same raw values as
 * compileDuckDbGroupKey (duckdb-soql-group.ts), so `decodeGroupValue` turns them into the API's
 * `value` unchanged: the dataset_id, the severity index, epoch milliseconds (Int64, which the
 * JSON formats write as a string; decodeGroupValue reads it with Number), bytes_raw, the
 * event_id text, and a payload value as its JSON text.
 */
import type { CompiledGroupKey } from '../event-store.js';
import type { FieldRef } from '../../soql/ast.js';
import { jsonPointer } from '../../soql/scope.js';
import { groupValue, hotGroupOf, hotJsonOf, type ClickHouseHotReads } from './clickhouse-soql-hot.js';

/**
 * The SQL expression to GROUP BY. A payload value is the node's `payload_json` element, the
 * JSON.stringify text ingest's payload gives that node (payload-paths.ts), so every JSON type
 * groups and 150 and "150" are two groups, as on DuckDB. NULL for a missing node ('' at index
 * 0) and for a JSON null ('null'); a string is never either (it is quoted). A container whose
 * text payload-paths.ts cut for size ('') is NULL too, i.e. grouped with the missing values
 * (documented in docs/soql-clickhouse.md), rather than a key decodeGroupValue cannot parse.
 * The path is a `?` parameter (a JSON pointer), like every payload path of the filter.
 */
export function compileClickHouseGroupKey(field: FieldRef, hot?: ClickHouseHotReads): CompiledGroupKey {
  if (field.kind === 'payload') {
    const pointer = jsonPointer(field.path);
    // A hot key's columns hold the same element (clickhouse-soql-hot.ts); `group by` groups by them first.
    const json = hotJsonOf(hot, pointer);
    const twoStep = hotGroupOf(hot, pointer);
    if (json) return { sql: groupValue(json), params: [], ...(twoStep ? { twoStep } : {}) };
    return { sql: groupValue('arrayElement(payload_json, indexOf(payload_paths, ?))'), params: [pointer] };
  }
  switch (field.name) {
    case 'dataset':
      return { sql: 'dataset_id', params: [] };
    default:
      // event_id is already text; the rest are the stored columns (actor and source Nullable).
      return { sql: field.name, params: [] };
  }
}
