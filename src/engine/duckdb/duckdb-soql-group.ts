/**
 * `group by` for the DuckDB back end: the one implementation POST /query runs (the query
 * service hands the compiled key to the event store's `aggregate`, and decodes its rows here).
 * The key expression returns raw column values (a dataset_id rather than its name, a severity
 * index, epoch milliseconds; a payload value as its JSON text) so grouping stays cheap;
 * `decodeGroupValue` turns each group's key into the API's `value` afterwards. Events missing
 * the field give a NULL key: one group with `value: null` (DECISIONS.md §9).
 */
import type { CompiledGroupKey } from '../event-store.js';
import { severities } from '../../shared/event-record.js';
import type { FieldRef } from '../../soql/ast.js';
import { jsonPointer } from './duckdb-soql.js';
import { hotGroupKey, noHotReads, type HotReads } from './duckdb-soql-hot.js';

/** A group's `value`: any JSON value (payload objects and arrays included). */
export type GroupValue = string | number | boolean | null | GroupValue[] | { [key: string]: GroupValue };

/**
 * The SQL expression to GROUP BY. A payload value comes out as its JSON text as DuckDB writes
 * it (compact; object keys in the order the event sent them), so every JSON type groups, and
 * 150 and "150" are two groups; a JSON null groups with the missing values, and so does every
 * value of a payload DuckDB's JSON reader refuses (TRY; see `json` in duckdb.ts). Ingest stored
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

/** Object and array values nest at most this deep in an answer (ingest's payload bound). */
const maxValueDepth = 32;

function nestedWithin(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (levels <= 0) return false;
  return Object.values(value).every((v) => nestedWithin(v, levels - 1));
}

/**
 * The API `value` of a group key as DuckDB returned it: payload values as the JSON value they
 * are (string, number, boolean, object, array), the dataset name (via the caller's dataset_id
 * → name map of the tenant's datasets), the severity name, ISO times, numbers for bytes_raw,
 * strings otherwise; null for the group of events missing the field. An object or array nested
 * deeper than ingest allows (stored before the bound existed) stays its JSON text, so the
 * answer can always be serialised.
 */
export function decodeGroupValue(field: FieldRef, raw: unknown, datasetNamesById: ReadonlyMap<string, string>): GroupValue {
  if (raw === null || raw === undefined) return null;
  if (field.kind === 'payload') {
    const text = String(raw);
    const value = JSON.parse(text) as GroupValue;
    return nestedWithin(value, maxValueDepth) ? value : text;
  }
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
