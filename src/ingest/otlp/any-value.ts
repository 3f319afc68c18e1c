import { ingestLimits, payloadLimits } from '../core/limits.js';

/**
 * OTLP values → JSON (docs/otlp.md, "AnyValue"). One reader serves both encodings: the objects
 * protobufjs decodes (unset fields read as null, int64 as Long, bytes as Uint8Array) and the
 * objects JSON.parse makes of OTLP/JSON (camelCase names, int64 as string or number, bytes as
 * base64). Anything malformed is a BadData: the request cannot be decoded (400).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type WireFormat = 'protobuf' | 'json';

/** The request is not a valid ExportLogsServiceRequest in its encoding (answered 400). */
export class BadData extends Error {}

/** More values than one request may hold (answered 413, like native ingest's other counts). */
export class TooManyValues extends Error {}

/** More log records than native ingest takes in one request (413, as there). */
export class TooManyRecords extends Error {}
export const tooManyRecords = () => new TooManyRecords(`a request may carry at most ${ingestLimits.events} log records`);

/** OTLP's bounds of ours: values per request (AnyValue and KeyValue messages), nesting of messages. */
export const otlpLimits = { values: 1_000_000, messageDepth: 128 } as const;

/** What converting one request carries along: its encoding and the values it has used. */
export interface Reading {
  format: WireFormat;
  values: number;
}

const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** protobufjs's Long (int64 and fixed64 when the `long` package is present): its toString is exact. */
const isLong = (v: unknown): v is { low: number; high: number } => isObject(v) && typeof v.low === 'number' && typeof v.high === 'number';

const decimal = /^-?\d+$/;

/** A 64-bit integer as sent: Long or number (protobuf), decimal string or number (JSON). Absent → 0. */
export function int64(v: unknown, path: string, unsigned = false): bigint {
  let n: bigint;
  if (v === null || v === undefined) return 0n;
  if (typeof v === 'bigint') n = v;
  else if (typeof v === 'number' && Number.isInteger(v)) n = BigInt(v);
  else if (typeof v === 'string' && decimal.test(v)) n = BigInt(v);
  else if (isLong(v)) n = BigInt(String(v));
  else throw new BadData(`${path} must be an integer (a number or a decimal string)`);
  const bits = unsigned ? BigInt.asUintN(64, n) : BigInt.asIntN(64, n);
  if (bits !== n) throw new BadData(`${path} is out of range for a${unsigned ? 'n unsigned' : ''} 64-bit integer`);
  return n;
}

/** An int32/uint32 field (enum, flags): a number, or a decimal string in JSON. Absent → 0. */
export function int32(v: unknown, path: string, unsigned = false): number {
  if (v === null || v === undefined) return 0;
  const n = typeof v === 'string' && decimal.test(v) ? Number(v) : v;
  const [min, max] = unsigned ? [0, 0xffff_ffff] : [-0x8000_0000, 0x7fff_ffff];
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new BadData(`${path} must be an integer${unsigned ? ' from 0 to 4294967295' : ''} (OTLP/JSON sends enums as numbers)`);
  }
  return n;
}

export function text(v: unknown, path: string): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') throw new BadData(`${path} must be a string`);
  return v;
}

export function list(v: unknown, path: string): readonly unknown[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw new BadData(`${path} must be an array`);
  return v;
}

export function message(v: unknown, path: string): Record<string, unknown> | undefined {
  if (v === null || v === undefined) return undefined;
  if (!isObject(v)) throw new BadData(`${path} must be an object`);
  return v;
}

const base64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;

/** A bytes field: Uint8Array (protobuf) or base64, standard or URL-safe (proto3 JSON). */
function bytes(v: unknown, format: WireFormat, path: string): Uint8Array {
  if (format === 'protobuf' && v instanceof Uint8Array) return v;
  if (format === 'json' && typeof v === 'string' && base64.test(v)) return Buffer.from(v, v.includes('-') || v.includes('_') ? 'base64url' : 'base64');
  throw new BadData(`${path} must be ${format === 'json' ? 'a base64 string' : 'bytes'}`);
}

/**
 * trace_id / span_id as lower-case hex: bytes in protobuf, case-insensitive hex in OTLP/JSON.
 * Empty or all zeros (no trace context) → ''. Any other length than `size` bytes is bad data.
 */
export function hexId(v: unknown, size: number, format: WireFormat, path: string): string {
  if (v === null || v === undefined || v === '') return '';
  let hex: string;
  if (format === 'protobuf' && v instanceof Uint8Array) hex = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  else if (format === 'json' && typeof v === 'string' && /^[0-9a-f]*$/i.test(v)) hex = v.toLowerCase();
  else throw new BadData(`${path} must be ${format === 'json' ? 'a hex string' : 'bytes'}`);
  if (hex.length === 0) return '';
  if (hex.length !== size * 2) throw new BadData(`${path} must be ${size} bytes (${size * 2} hex digits) or empty`);
  return /^0+$/.test(hex) ? '' : hex;
}

/** A double: a number, or (proto3 JSON) "NaN", "Infinity", "-Infinity" or a numeric string. */
function double(v: unknown, path: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (v === 'NaN') return NaN;
    if (v === 'Infinity') return Infinity;
    if (v === '-Infinity') return -Infinity;
    const n = Number(v);
    if (v.trim() !== '' && Number.isFinite(n)) return n;
  }
  throw new BadData(`${path} must be a number`);
}

function count(reading: Reading): void {
  if (++reading.values > otlpLimits.values) {
    throw new TooManyValues(`the request holds more than ${otlpLimits.values} attribute values (AnyValue and KeyValue messages); send smaller batches`);
  }
}

/** A fresh object without a prototype: an attribute named `__proto__` is then an ordinary key. */
const record = (): Record<string, Json> => Object.create(null) as Record<string, Json>;

/**
 * An AnyValue as JSON, for a value that sits at nesting `level` of the event payload (the
 * payload object is level 1, so a record attribute's value is at level 2). string, bool and
 * double map to themselves (a non-finite double to its name: "NaN", "Infinity", "-Infinity");
 * int to a number, or to its exact decimal string beyond ±2^53-1; bytes to standard base64;
 * array to an array; kvlist to an object (a repeated key: the last wins); no value to null.
 *
 * An array or kvlist that would sit deeper than native ingest's depth bound is cut to `[]`
 * there: the event is refused by that bound anyway (its own message), and the cut keeps this
 * walk (and everything after it) from following a nesting of any depth.
 */
export function anyValue(value: unknown, level: number, reading: Reading, path: string): Json {
  count(reading);
  const v = message(value, path);
  if (v === undefined) return null;
  const set = (key: string) => v[key] !== null && v[key] !== undefined;
  if (set('stringValue')) return text(v.stringValue, `${path}.stringValue`);
  if (set('boolValue')) {
    if (typeof v.boolValue !== 'boolean') throw new BadData(`${path}.boolValue must be a boolean`);
    return v.boolValue;
  }
  if (set('intValue')) {
    const n = int64(v.intValue, `${path}.intValue`);
    return n <= maxSafe && n >= -maxSafe ? Number(n) : n.toString();
  }
  if (set('doubleValue')) {
    const d = double(v.doubleValue, `${path}.doubleValue`);
    return Number.isFinite(d) ? d : String(d);
  }
  if (set('arrayValue')) {
    const values = list(message(v.arrayValue, `${path}.arrayValue`)?.values, `${path}.arrayValue.values`);
    if (level > payloadLimits.depth) return [];
    return values.map((item, i) => anyValue(item, level + 1, reading, `${path}.arrayValue.values[${i}]`));
  }
  if (set('kvlistValue')) {
    const values = list(message(v.kvlistValue, `${path}.kvlistValue`)?.values, `${path}.kvlistValue.values`);
    if (level > payloadLimits.depth) return [];
    return keyValues(values, level + 1, reading, `${path}.kvlistValue.values`);
  }
  if (set('bytesValue')) return Buffer.from(bytes(v.bytesValue, reading.format, `${path}.bytesValue`)).toString('base64');
  return null;
}

/**
 * A repeated KeyValue (attributes, a kvlist) as one object; `level` is the level of the values.
 * Keys are kept as they are, dots included; a repeated key: the last wins.
 */
export function keyValues(items: readonly unknown[], level: number, reading: Reading, path: string): Record<string, Json> {
  const out = record();
  items.forEach((item, i) => {
    count(reading);
    const kv = message(item, `${path}[${i}]`);
    if (kv === undefined) return;
    out[text(kv.key, `${path}[${i}].key`)] = anyValue(kv.value, level, reading, `${path}[${i}].value`);
  });
  return out;
}
