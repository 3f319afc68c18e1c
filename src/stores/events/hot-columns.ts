/**
 * Hot payload keys (issue #31, docs/events-engine.md "Hot payload keys"): a dataset's most used
 * payload keys are also stored as typed columns, so a query on them reads a column instead of
 * parsing every payload's JSON.
 *
 * Layout. `events` has 32 slots, each a VARCHAR column `hot_s<k>` (strings; booleans as
 * 'true'/'false') and a DOUBLE column `hot_n<k>` (numbers), plus two integers per row:
 * - `hot_layout`: the id of the dataset's layout when the row was loaded (NULL: none). A layout
 *   is immutable (which key is in which slot, with which type); changing a dataset's hot keys
 *   makes a new one. A query is compiled against the layouts it knows, so rows written under a
 *   layout it does not know (older, newer, another dataset's) read the JSON: never a wrong slot.
 * - `hot_json`: a bit per slot whose value the column does not hold (another type than the
 *   slot's, a JSON null, an object or array, a string DuckDB stores differently, a payload
 *   DuckDB cannot read): those rows read the JSON too.
 * So a slot's column is authoritative exactly when the row's layout is known and its bit is
 * clear; then NULL means "the key is missing". Everything else is today's JSON path, which is
 * why every answer stays what it was without hot columns.
 */
import { duckDbCannotRead } from './payload-text.js';

/** Hot keys per dataset (issue #31: up to 32). */
export const maxHotKeys = 32;

export type HotType = 'string' | 'number' | 'boolean';

/** A hot key: its path below payload as a JSON pointer (RFC 6901, as SOQL compiles it), and its type. */
export interface HotKey {
  pointer: string;
  type: HotType;
}

export interface HotSlot extends HotKey {
  /** 0 … maxHotKeys - 1: columns hot_s<slot> / hot_n<slot>, bit 1 << slot of hot_json. */
  slot: number;
}

/** One immutable layout of one dataset's hot keys. */
export interface HotLayout {
  id: number;
  datasetId: string;
  slots: HotSlot[];
}

export const hotStringColumn = (slot: number): string => `hot_s${slot}`;
export const hotNumberColumn = (slot: number): string => `hot_n${slot}`;
/** The column a slot of this type reads. */
export const hotColumn = (s: { slot: number; type: HotType }): string => (s.type === 'number' ? hotNumberColumn(s.slot) : hotStringColumn(s.slot));

/** The hot columns of `events`, in table order after the event's own columns. */
export const hotColumnList: ReadonlyArray<{ name: string; sql: 'UINTEGER' | 'VARCHAR' | 'DOUBLE' }> = [
  { name: 'hot_layout', sql: 'UINTEGER' },
  { name: 'hot_json', sql: 'UINTEGER' },
  ...Array.from({ length: maxHotKeys }, (_, k) => ({ name: hotStringColumn(k), sql: 'VARCHAR' as const })),
  ...Array.from({ length: maxHotKeys }, (_, k) => ({ name: hotNumberColumn(k), sql: 'DOUBLE' as const })),
];

/** Path components of a JSON pointer (RFC 6901). */
export function pointerPath(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * The next layout of a dataset: keys already hot with the same type keep their slot (so the
 * columns of one key stay one column as long as it is hot); new keys take the lowest free
 * slots. Undefined when `keys` is what `current` holds already. At most maxHotKeys keys.
 */
export function nextSlots(current: readonly HotSlot[], keys: readonly HotKey[]): HotSlot[] | undefined {
  const wanted = dedupe(keys).slice(0, maxHotKeys);
  const same = wanted.length === current.length && wanted.every((k) => current.some((s) => s.pointer === k.pointer && s.type === k.type));
  if (same) return undefined;
  const kept = current.filter((s) => wanted.some((k) => k.pointer === s.pointer && k.type === s.type));
  const used = new Set(kept.map((s) => s.slot));
  const slots = [...kept];
  for (const k of wanted) {
    if (kept.some((s) => s.pointer === k.pointer)) continue;
    let slot = 0;
    while (used.has(slot)) slot++;
    used.add(slot);
    slots.push({ pointer: k.pointer, type: k.type, slot });
  }
  return slots.sort((a, b) => a.slot - b.slot);
}

function dedupe(keys: readonly HotKey[]): HotKey[] {
  const seen = new Set<string>();
  return keys.filter((k) => !seen.has(k.pointer) && seen.add(k.pointer));
}

/** One row's hot values: per slot a string, a number or null, and the bits read from the JSON. */
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
