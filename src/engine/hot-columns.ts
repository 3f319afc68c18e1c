/**
 * Hot payload keys (docs/events-engine.md "Hot payload keys"): a dataset's most used
 * payload keys are also stored as typed columns, so a query on them reads a column instead of
 * parsing every payload's JSON.
 *
 * Layout. `events` gets, as hot keys need them, VARCHAR columns `hot_s<i>` (strings; booleans as
 * 'true'/'false') and DOUBLE columns `hot_n<i>` (numbers), at most 32 of each, shared by the
 * datasets (a dataset's keys take the lowest free ones of their kind), plus two integers per
 * row (added with the first hot key; a store without hot keys has none of these columns: every
 * column costs the loader a 256 KiB block per row group in memory, whether it holds values or not):
 * - `hot_layout`: the id of the dataset's layout when the row was loaded (NULL: none). A layout
 *   is immutable (which key is in which slot, with which type); changing a dataset's hot keys
 *   makes a new one. A query is compiled against the layouts it knows, so rows written under a
 *   layout it does not know (older, newer, another dataset's) read the JSON: never a wrong slot.
 * - `hot_json`: a bit per key of the layout (its `slot`, 0–31) whose value the column does not hold (another type than the
 *   slot's, a JSON null, an object or array, a string DuckDB stores differently, a payload
 *   DuckDB cannot read): those rows read the JSON too.
 * So a slot's column is authoritative exactly when the row's layout is known and its bit is
 * clear; then NULL means "the key is missing". Everything else is today's JSON path, which is
 * why every answer stays what it was without hot columns.
 */
import { duckDbCannotRead } from '../soql/payload-text.js';

/** Hot keys per dataset (up to 32). */
export const maxHotKeys = 32;

export type HotType = 'string' | 'number' | 'boolean';

/** A hot key: its path below payload as a JSON pointer (RFC 6901, as SOQL compiles it), and its type. */
export interface HotKey {
  pointer: string;
  type: HotType;
}

export interface HotSlot extends HotKey {
  /** 0 … maxHotKeys - 1: the key's bit (1 << slot) in hot_json. */
  slot: number;
  /** 0 … maxHotKeys - 1: its column, hot_s<column> (strings, booleans) or hot_n<column> (numbers). */
  column: number;
}

/** One immutable layout of one dataset's hot keys. */
export interface HotLayout {
  id: number;
  datasetId: string;
  slots: HotSlot[];
  /**
   * ClickHouse only (clickhouse/clickhouse-hot-layouts.ts), where a read uses a column only when
   * every row it reads carries it: the ts range of the dataset's stored rows loaded with this
   * layout (absent: none). Layout 0, with no slots, stands for rows loaded without hot keys.
   */
  stored?: { minTs: number; maxTs: number };
  /** ClickHouse only: the layout the dataset's next rows are loaded with (rows not loaded yet carry it). */
  current?: boolean;
  /**
   * DuckDB only (duckdb/duckdb-hot-layouts.ts), where a read may leave the JSON out when no row
   * it can see needs it: the dataset's stored rows loaded with this layout (absent: none; layout
   * 0, with no slots, stands for rows loaded without hot keys). `json`: the OR of their hot_json
   * bits; `oddNumbers`: a bit per number column (1 << i for hot_n<i>) holding, in some row, a
   * number that is not an integer below 10^15 (the `group by` key reads those from the JSON).
   * Both only grow between recounts (a delete leaves them as they were: conservative).
   */
  rows?: { json: number; oddNumbers: number };
  /**
   * ClickHouse only: per slot of this layout (indexed by slot), the type codes its stored rows
   * hold there, bit t for payload_types' code t (0 missing, 1 string … 6 array); absent: not
   * known (any). The `group by` key groups by the columns these leave varying (clickhouse-soql-hot.ts
   * hotGroupOf). Only grows between recounts, like `rows`.
   */
  types?: number[];
  /**
   * The version of the dataset's `rows` (DuckDB) or `types` (ClickHouse), the same on each of
   * its layouts. It changes whenever they grow — rows of a layout not seen before, a new bit —
   * and the change is made before those rows can be read, so a read that relied on one version
   * and finds the same version afterwards saw no row outside it (soql-read.ts).
   */
  version?: string;
}

/** Whether a number is kept as the `group by` key's digits (an integer below 10^15); else the key reads the JSON. */
export const isPlainInteger = (n: number): boolean => Number.isInteger(n) && Math.abs(n) < 1e15;

export const hotStringColumn = (column: number): string => `hot_s${column}`;
export const hotNumberColumn = (column: number): string => `hot_n${column}`;
/** The column of a key of this type. */
export const hotColumn = (s: { column: number; type: HotType }): string => (s.type === 'number' ? hotNumberColumn(s.column) : hotStringColumn(s.column));

/** The columns a layout needs in `events` (the two per-row integers first). */
export const hotColumnsOf = (slots: readonly HotSlot[]): string[] => ['hot_layout', 'hot_json', ...slots.map(hotColumn)];

/** The SQL type of a hot column, by its name. */
export const hotColumnType = (name: string): 'UINTEGER' | 'VARCHAR' | 'DOUBLE' =>
  name.startsWith('hot_s') ? 'VARCHAR' : name.startsWith('hot_n') ? 'DOUBLE' : 'UINTEGER';

/** Whether a column of `events` is a hot column (one this file names). */
export const isHotColumn = (name: string): boolean => /^hot_(?:layout|json|[sn](?:[12]?\d|3[01]))$/.test(name);

/** Path components of a JSON pointer (RFC 6901). */
export function pointerPath(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * The next layout of a dataset: keys already hot with the same type keep their slot and column
 * (so one key stays in one column as long as it is hot); new keys take the lowest free slot and
 * the lowest free column of their kind. Undefined when `keys` is what `current` holds already.
 * At most maxHotKeys keys.
 */
export function nextSlots(current: readonly HotSlot[], keys: readonly HotKey[]): HotSlot[] | undefined {
  const wanted = dedupe(keys).slice(0, maxHotKeys);
  const same = wanted.length === current.length && wanted.every((k) => current.some((s) => s.pointer === k.pointer && s.type === k.type));
  if (same) return undefined;
  const kept = current.filter((s) => wanted.some((k) => k.pointer === s.pointer && k.type === s.type));
  const used = new Set(kept.map((s) => s.slot));
  const usedColumns = new Set(kept.map(hotColumn));
  const slots = [...kept];
  const lowest = (taken: (n: number) => boolean): number => {
    let n = 0;
    while (taken(n)) n++;
    return n;
  };
  for (const k of wanted) {
    if (kept.some((s) => s.pointer === k.pointer)) continue;
    const slot = lowest((n) => used.has(n));
    const column = lowest((n) => usedColumns.has(hotColumn({ column: n, type: k.type })));
    used.add(slot);
    usedColumns.add(hotColumn({ column, type: k.type }));
    slots.push({ pointer: k.pointer, type: k.type, slot, column });
  }
  return slots.sort((a, b) => a.slot - b.slot);
}

function dedupe(keys: readonly HotKey[]): HotKey[] {
  const seen = new Set<string>();
  return keys.filter((k) => !seen.has(k.pointer) && seen.add(k.pointer));
}

/** One row's hot values: per slot (indexed by slot) a string, a number or null, and the bits read from the JSON. */
export interface HotValues {
  strings: Array<string | null>;
  numbers: Array<number | null>;
  json: number;
}

const allBits = (slots: readonly HotSlot[]): number => slots.reduce((bits, s) => (bits | (1 << s.slot)) >>> 0, 0);

/**
 * Extracts the slots' values from one payload's JSON text, into `out` (indexed by slot). When
 * in doubt the bit is set and the column left NULL: reading the JSON is always exact.
 */
export function extractHotValues(slots: readonly HotSlot[], paths: readonly string[][], payloadJson: string, out: HotValues): void {
  out.json = 0;
  for (const s of slots) {
    out.strings[s.slot] = null;
    out.numbers[s.slot] = null;
  }
  let payload: unknown;
  // A payload DuckDB's JSON reader refuses reads as empty on the JSON path: leave it to it.
  if (duckDbCannotRead(payloadJson)) {
    out.json = allBits(slots);
    return;
  }
  try {
    payload = JSON.parse(payloadJson);
  } catch {
    out.json = allBits(slots);
    return;
  }
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    const found = lookup(payload, paths[i]!);
    if (found === missing) continue;
    if (s.type === 'string' && typeof found === 'string' && !found.includes('\u0000')) out.strings[s.slot] = found;
    else if (s.type === 'boolean' && typeof found === 'boolean') out.strings[s.slot] = found ? 'true' : 'false';
    else if (s.type === 'number' && typeof found === 'number' && Number.isFinite(found)) out.numbers[s.slot] = found;
    else out.json = (out.json | (1 << s.slot)) >>> 0;
  }
}

const missing = Symbol('missing');
/** Marks a path through an array: DuckDB's pointer indexes arrays, so the JSON decides. */
const throughArray = Symbol('array');

function lookup(value: unknown, path: readonly string[]): unknown {
  let node = value;
  for (const key of path) {
    if (Array.isArray(node)) return throughArray;
    if (typeof node !== 'object' || node === null) return missing;
    if (!Object.prototype.hasOwnProperty.call(node, key)) return missing;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
