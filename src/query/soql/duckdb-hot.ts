/**
 * Reading a payload key through its hot columns on DuckDB (engine/hot-columns.ts), with
 * the JSON as the fallback, so an answer is the same whether or not a key is hot.
 *
 * Each read is `CASE WHEN <row's layout is one where the key is in slot k, and its bit is
 * clear> THEN <the column> … ELSE <today's JSON read> END`: DuckDB evaluates the ELSE only for
 * the rows that reach it (rows loaded before the key was hot, or whose value the column does
 * not hold), so the rows with the column never parse their JSON. The SQL added is built from
 * constants, column names of the fixed list `hot_s0…hot_s31` / `hot_n0…hot_n31` and integers
 * of the engine (layout ids, slot bits): no text of the query; the JSON branch keeps its `?`.
 */
import { hotColumn, hotNumberColumn, hotStringColumn, type HotLayout, type HotType } from '../../engine/hot-columns.js';

/** Where a key may be read from a column: one entry per (slot, type), with the layouts that put it there. */
interface HotPlace {
  /** The key's bit in hot_json. */
  slot: number;
  /** Its column (hot_s<column> or hot_n<column>). */
  column: number;
  type: HotType;
  layouts: number[];
}

/** Per JSON pointer, the columns it may be read from. Empty: everything reads the JSON. */
export type HotReads = ReadonlyMap<string, readonly HotPlace[]>;

export const noHotReads: HotReads = new Map();

/** The reads of the layouts a query's datasets may carry (EventStore.hotLayouts). */
export function hotReadsOf(layouts: readonly HotLayout[]): HotReads {
  const reads = new Map<string, HotPlace[]>();
  for (const layout of layouts) {
    if (!Number.isSafeInteger(layout.id) || layout.id < 0) continue;
    for (const s of layout.slots) {
      if (![s.slot, s.column].every((n) => Number.isInteger(n) && n >= 0 && n <= 31)) continue;
      const places = reads.get(s.pointer) ?? [];
      let place = places.find((p) => p.slot === s.slot && p.column === s.column && p.type === s.type);
      if (!place) places.push((place = { slot: s.slot, column: s.column, type: s.type, layouts: [] }));
      place.layouts.push(layout.id);
      reads.set(s.pointer, places);
    }
  }
  return reads;
}

/** The condition under which the row's value of the key is in this place's column. */
const held = (p: HotPlace): string => `(hot_layout IN (${p.layouts.join(', ')}) AND (hot_json & ${2 ** p.slot}) = 0)`;

/**
 * `CASE WHEN held THEN typed … ELSE json END`, or the JSON read alone when the key is not hot.
 * `json` is called once, after the typed branches, so its `?` keep their order in the text.
 */
function hotCase(reads: HotReads, pointer: string, typed: (p: HotPlace) => string | null, json: () => string, extra?: (p: HotPlace) => string): string {
  const places = reads.get(pointer);
  if (!places?.length) return json();
  const branches = places.flatMap((p) => {
    const value = typed(p);
    return value === null ? [] : [`WHEN ${held(p)}${extra ? ` AND ${extra(p)}` : ''} THEN ${value}`];
  });
  if (!branches.length) return json();
  return `(CASE ${branches.join(' ')} ELSE ${json()} END)`;
}

/** json_type's answer for a present value of the slot's type (compared only with 'VARCHAR', 'BOOLEAN', 'NULL'). */
const typeName: Record<HotType, string> = { string: "'VARCHAR'", boolean: "'BOOLEAN'", number: "'DOUBLE'" };

export const hotType = (reads: HotReads, pointer: string, json: () => string): string =>
  hotCase(reads, pointer, (p) => `(CASE WHEN ${hotColumn(p)} IS NOT NULL THEN ${typeName[p.type]} END)`, json);

/** json_extract_string: the string of a string or boolean slot (read only under a type test). */
export const hotString = (reads: HotReads, pointer: string, json: () => string): string =>
  hotCase(reads, pointer, (p) => (p.type === 'number' ? 'CAST(NULL AS VARCHAR)' : hotStringColumn(p.column)), json);

/** The key's number, NULL for any other type (duckDbPayloadNumber). */
export const hotNumber = (reads: HotReads, pointer: string, json: () => string): string =>
  hotCase(reads, pointer, (p) => (p.type === 'number' ? hotNumberColumn(p.column) : 'CAST(NULL AS DOUBLE)'), json);

/**
 * The group key: the value's JSON text as DuckDB writes it (duckdb-group.ts). A string's is
 * to_json of it (the same writer); a boolean's is its text. A number's is its digits when it is
 * an integer below 10^15 (JSON.stringify and DuckDB both write those as plain digits); any other
 * number reads the JSON, so 1.5, 1e+21 and 2^60 group exactly as before.
 */
export const hotGroupKey = (reads: HotReads, pointer: string, json: () => string): string =>
  hotCase(
    reads,
    pointer,
    (p) => (p.type === 'string' ? `CAST(to_json(${hotStringColumn(p.column)}) AS VARCHAR)` : p.type === 'boolean' ? hotStringColumn(p.column) : `CAST(CAST(${hotNumberColumn(p.column)} AS BIGINT) AS VARCHAR)`),
    json,
    (p) => (p.type === 'number' ? `(${hotNumberColumn(p.column)} IS NULL OR (${hotNumberColumn(p.column)} = trunc(${hotNumberColumn(p.column)}) AND abs(${hotNumberColumn(p.column)}) < 1e15))` : 'TRUE'),
  );
