/**
 * The payload of an event, flattened at load time into parallel arrays, one element per node
 * below the root (objects, arrays and leaves, in document order). ClickHouse 18.16 has no
 * JSON path functions (its visitParam* functions match a key name at any depth), so SOQL's
 * payload fields read these arrays instead: `indexOf(payload_paths, '/match/map')` finds the
 * node (0 when missing), and the other arrays at that index give its type and value. This is
 * the layout log stores on ClickHouse use for attributes (SigNoz, Uptrace), and it runs the
 * same on a current server.
 *
 * Paths are RFC 6901 JSON pointers (duckdb/duckdb-soql.ts's jsonPointer), array elements by decimal
 * index, exactly as predicate.ts's lookupPayload follows them.
 */
import { duckDbCannotRead } from '../../soql/payload-text.js';

/** payload_types values; 0 (ClickHouse's default for an index past the array) is "missing". */
export const payloadType = { string: 1, number: 2, boolean: 3, null: 4, object: 5, array: 6 } as const;

export interface FlatPayload {
  paths: string[];
  types: number[];
  /** Strings: the string; booleans: 'true' / 'false'; every other node ''. */
  text: string[];
  /** Numbers: the value; every other node 0. */
  numbers: number[];
  /** Every node's JSON text as JSON.stringify writes it (`group by` keys), within `maxJsonBytes`. */
  json: string[];
}

/**
 * Object and array nodes repeat their subtree's JSON text at each level; past this many bytes
 * for one event, deeper containers get '' (a `group by` on such a container then groups them
 * as one value: a documented limit; leaves are never cut).
 */
export const maxJsonBytes = 64 * 1024;

/**
 * Nodes deeper than this are not flattened (they read as missing on ClickHouse). Ingest caps
 * payloads at 32 levels (src/ingest/core/limits.ts); only events stored before the caps can be deeper,
 * and flattening them whole would cost their depth times their size.
 */
export const maxFlatDepth = 64;

const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON text of each top-level value of an object's JSON text, by key, in one pass without
 * recursion: the exact text (as ingest wrote it) of a top-level object or array, however big or
 * deep, for `group by payload.key`, without stringifying it again.
 */
export function topLevelTexts(text: string): Map<string, string> {
  const spans = new Map<string, string>();
  let depth = 0;
  let key = '';
  let valueStart = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && valueStart < 0) key = JSON.parse(text.slice(start, i + 1)) as string;
    } else if (c === ':' && depth === 1 && valueStart < 0) {
      valueStart = i + 1;
    } else if (c === '{' || c === '[') {
      depth++;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0 && valueStart >= 0) spans.set(key, text.slice(valueStart, i).trim());
    } else if (c === ',' && depth === 1) {
      spans.set(key, text.slice(valueStart, i).trim());
      valueStart = -1;
    }
  }
  return spans;
}

/** Flattens one payload's JSON text (an object, as ingest wrote it). */
export function flattenPayload(payloadJson: string): FlatPayload {
  const out: FlatPayload = { paths: [], types: [], text: [], numbers: [], json: [] };
  // A payload DuckDB cannot read reads as empty on every engine (predicate.ts).
  if (payloadJson === '{}' || duckDbCannotRead(payloadJson)) return out;
  let root: unknown;
  try {
    root = JSON.parse(payloadJson);
  } catch {
    return out;
  }
  if (root === null || typeof root !== 'object') return out;
  let budget = maxJsonBytes;
  let topLevel: Map<string, string> | undefined;
  const containerJson = (value: object, topKey: string | undefined): string => {
    // Top-level containers: their own text, whatever the budget (the payload holds it once).
    if (topKey !== undefined) {
      topLevel ??= topLevelTexts(payloadJson);
      const text = topLevel.get(topKey);
      if (text !== undefined) return text;
    }
    if (budget <= 0) return '';
    let json: string;
    try {
      json = JSON.stringify(value);
    } catch {
      return ''; // nested past what the stack holds
    }
    if (json.length > budget) return '';
    budget -= json.length;
    return json;
  };
  const visit = (value: unknown, path: string, depth: number, topKey?: string): void => {
    if (typeof value === 'string') return push(path, payloadType.string, value, 0, JSON.stringify(value));
    if (typeof value === 'number') return push(path, payloadType.number, '', value, JSON.stringify(value));
    if (typeof value === 'boolean') return push(path, payloadType.boolean, String(value), 0, String(value));
    if (value === null) return push(path, payloadType.null, '', 0, 'null');
    const isArray = Array.isArray(value);
    push(path, isArray ? payloadType.array : payloadType.object, '', 0, containerJson(value as object, topKey));
    if (depth >= maxFlatDepth) return;
    if (isArray) value.forEach((v, i) => visit(v, `${path}/${i}`, depth + 1));
    else for (const [k, v] of Object.entries(value as Record<string, unknown>)) visit(v, `${path}/${escapePointer(k)}`, depth + 1);
  };
  const push = (path: string, type: number, text: string, n: number, json: string): void => {
    out.paths.push(path);
    out.types.push(type);
    out.text.push(text);
    out.numbers.push(n);
    out.json.push(json);
  };
  for (const [k, v] of Object.entries(root as Record<string, unknown>)) visit(v, `/${escapePointer(k)}`, 1, k);
  return out;
}
