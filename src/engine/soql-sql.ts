/**
 * What both engines' SOQL compilers share (DuckDB: duckdb/duckdb-soql.ts; ClickHouse:
 * clickhouse/clickhouse-soql.ts): parameters, the compile context, LIKE patterns, operators,
 * and the decoding of a group key's raw value, which both engines return alike.
 */
import { severities } from '../shared/event-record.js';
import type { HotReads } from './duckdb/duckdb-soql-hot.js';
import type { ClickHouseHotReads } from './clickhouse/clickhouse-soql-hot.js';
import type { CompareOp, FieldRef } from '../soql/ast.js';
import type { GroupValue } from './event-store.js';

export type SqlParam = string | number | boolean;

export interface SqlFragment {
  sql: string;
  params: SqlParam[];
}

/** What a compiler needs besides the query (both dialects). */
export interface CompileContext {
  /** epoch milliseconds that `now` and relative times resolve against */
  now: number;
  /** the tenant's active datasets: name → dataset_id */
  datasetIds: ReadonlyMap<string, string>;
  /** Payload keys readable from hot columns (duckdb/duckdb-soql-hot.ts; absent: every read parses the JSON). */
  hot?: HotReads;
  /** The same on ClickHouse (clickhouse/clickhouse-soql-hot.ts; absent: every read goes to the flattened arrays). */
  clickHouseHot?: ClickHouseHotReads;
}

/** A LIKE pattern with `\` as escape: contains, or `*` → `%` for a whole-field wildcard. */
export function likePattern(text: string, wildcard: boolean): string {
  const escaped = text.replace(/[\\%_]/g, (c) => `\\${c}`);
  return wildcard ? escaped.replace(/\*/g, '%') : `%${escaped}%`;
}

/** The SQL comparison operator of each SOQL operator (the same in both dialects). */
export const SQL_OPS: Record<CompareOp, string> = { ':': '=', '!:': '<>', '==': '=', '!=': '<>', '>': '>', '>=': '>=', '<': '<', '<=': '<=' };

/** A group's `value`: any JSON value (payload objects and arrays included). */
export type { GroupValue };

/** Object and array values nest at most this deep in an answer (ingest's payload bound). */
const maxValueDepth = 32;

function nestedWithin(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (levels <= 0) return false;
  return Object.values(value).every((v) => nestedWithin(v, levels - 1));
}

/**
 * The API `value` of a group key as the engine returned it (both return the same raw values): payload values as the JSON value they
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
