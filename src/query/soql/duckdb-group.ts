/**
 * `group by` for the DuckDB back end. The key expression returns raw column values (a
 * dataset_id rather than its name, a severity index, epoch milliseconds) so grouping stays
 * cheap; `decodeGroupValue` turns each group's key into the API's `value` afterwards. Events
 * missing the field give a NULL key: one group with `value: null` (DECISIONS.md §9).
 */
import { severities } from '../../stores/events/event-record.js';
import type { FieldRef } from './ast.js';
import { jsonPointer, type SqlFragment } from './duckdb.js';

/**
 * The SQL expression to GROUP BY. Payload values come out as their JSON scalar text (the
 * string itself for strings, `150`, `true`; objects and arrays as JSON), so 150 and "150" share a
 * group; a JSON null groups with the missing values. `dataset` comes out as the dataset_id.
 */
export function compileDuckDbGroupKey(field: FieldRef): SqlFragment {
  if (field.kind === 'payload') return { sql: 'json_extract_string(payload, ?)', params: [jsonPointer(field.path)] };
  switch (field.name) {
    case 'dataset':
      return { sql: 'dataset_id', params: [] };
    case 'event_id':
      return { sql: 'CAST(event_id AS VARCHAR)', params: [] };
    default:
      return { sql: field.name, params: [] };
  }
}

/**
 * The API `value` of a group key as DuckDB returned it: the dataset name (via the caller's
 * dataset_id → name map of the tenant's datasets), the severity name, ISO times, numbers for
 * bytes_raw, strings otherwise; null for the group of events missing the field.
 */
export function decodeGroupValue(
  field: FieldRef,
  raw: unknown,
  datasetNamesById: ReadonlyMap<string, string>,
): string | number | null {
  if (raw === null || raw === undefined) return null;
  if (field.kind === 'payload') return String(raw);
  switch (field.name) {
    case 'dataset':
      return datasetNamesById.get(String(raw)) ?? null;
    case 'severity':
      return severities[Number(raw)] ?? null;
    case 'ts':
    case 'ingested_at':
      return new Date(Number(raw)).toISOString();
    case 'bytes_raw':
      return Number(raw);
    default:
      return String(raw);
  }
}
