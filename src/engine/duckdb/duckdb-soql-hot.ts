/**
 * Reading a payload key through its hot columns on DuckDB (engine/hot-columns.ts), with
 * the JSON as the fallback, so an answer is the same whether or not a key is hot.
 *
 * Each read is `CASE WHEN <row's layout is one where the key is in slot k, and its bit is
 * clear> THEN <the column> … ELSE <today's JSON read> END`: DuckDB evaluates the ELSE only for
 * the rows that reach it (rows loaded before the key was hot, or whose value the column does
 * not hold), so the rows with the column never parse their JSON. They still pay for the CASE,
 * and DuckDB reads every column an expression names for every row: the payload text too.
 *
 * So when the store says that no stored row of the query's datasets needs the JSON for a key
 * (HotLayout.rows: every row of those datasets has a layout holding the key, with its bit
 * clear), the read is the column alone (or a CASE over hot_layout between the key's columns),
 * and the payload is not read. That holds for the rows of one version of the store's counts
 * (HotLayout.version); the store's SOQL read (soql-read.ts) asks again after it, and reads again with the
 * JSON when a version changed meanwhile (rows that need it may have been read).
 *
 * The SQL added is built from constants, column names of the fixed list `hot_s0…hot_s31` /
 * `hot_n0…hot_n31` and integers of the engine (layout ids, slot bits): no text of the query;
 * the JSON branch keeps its `?`.
 */
import { hotColumn, hotNumberColumn, hotStringColumn, type HotLayout, type HotType } from '../hot-columns.js';

/** Where a key may be read from a column: one entry per (slot, type), with the layouts that put it there. */
interface HotPlace {
  /** The key's bit in hot_json. */
  slot: number;
  /** Its column (hot_s<column> or hot_n<column>). */
  column: number;
  type: HotType;
  layouts: number[];
}

interface HotKeyReads {
  /** Every place of the key, for the per-row CASE with the JSON as its ELSE. */
  places: readonly HotPlace[];
  /** Set when no row the read can see needs the JSON for the key: the places those rows are in. */
  only?: readonly HotPlace[];
  /** The same for the `group by` key, which also reads numbers other than integers below 10^15 from the JSON. */
  onlyGroup?: readonly HotPlace[];
}

/** Per JSON pointer, the columns it may be read from. No keys: everything reads the JSON. */
export interface HotReads {
  readonly keys: ReadonlyMap<string, HotKeyReads>;
  /**
   * The versions of the datasets' counts (HotLayout.version) the reads without JSON relied on;
   * empty when every read keeps the JSON. soql-read.ts compares them after the read.
   */
  readonly relied: ReadonlyMap<string, string>;
}

export const noHotReads: HotReads = { keys: new Map(), relied: new Map() };

const validLayout = (l: HotLayout): boolean => Number.isSafeInteger(l.id) && l.id >= 0;
const validPlace = (s: { slot: number; column: number }): boolean => [s.slot, s.column].every((n) => Number.isInteger(n) && n >= 0 && n <= 31);
const bit = (n: number): number => 2 ** n;
const has = (mask: number, n: number): boolean => Math.floor(mask / bit(n)) % 2 === 1;

/**
 * The reads of the layouts a query's datasets may carry (EventStore.hotLayouts). With `scope`
 * (the datasets the query can read, and the keys it reads), a key no stored row of those
 * datasets needs the JSON for is read from its columns alone.
 */
export function hotReadsOf(layouts: readonly HotLayout[], scope?: { datasetIds: readonly string[]; pointers: ReadonlySet<string> }): HotReads {
  const keys = new Map<string, { places: HotPlace[]; only?: HotPlace[]; onlyGroup?: HotPlace[] }>();
  for (const layout of layouts) {
    if (!validLayout(layout)) continue;
    for (const s of layout.slots) {
      if (!validPlace(s)) continue;
      const key = keys.get(s.pointer) ?? { places: [] };
      let place = key.places.find((p) => p.slot === s.slot && p.column === s.column && p.type === s.type);
      if (!place) key.places.push((place = { slot: s.slot, column: s.column, type: s.type, layouts: [] }));
      place.layouts.push(layout.id);
      keys.set(s.pointer, key);
    }
  }
  const relied = new Map<string, string>();
  if (scope) {
    const stored = storedRows(layouts, scope.datasetIds);
    if (stored) {
      for (const pointer of scope.pointers) {
        const key = keys.get(pointer);
        if (!key) continue;
        const only = placesWithoutJson(stored.layouts, pointer, false);
        const onlyGroup = placesWithoutJson(stored.layouts, pointer, true);
        if (only) key.only = only;
        if (onlyGroup) key.onlyGroup = onlyGroup;
        if (only || onlyGroup) for (const [id, version] of stored.versions) relied.set(id, version);
      }
    }
  }
  return { keys, relied };
}

/**
 * The layouts of the stored rows of these datasets and the versions of their counts;
 * undefined when the store does not count some dataset's rows (no hot keys ever, or another
 * engine), or a layout is malformed.
 */
function storedRows(layouts: readonly HotLayout[], datasetIds: readonly string[]): { layouts: HotLayout[]; versions: Map<string, string> } | undefined {
  const versions = new Map<string, string>();
  const seen: HotLayout[] = [];
  for (const l of layouts) {
    if (!datasetIds.includes(l.datasetId)) continue;
    if (typeof l.version !== 'string' || !validLayout(l)) return undefined;
    if (versions.has(l.datasetId) && versions.get(l.datasetId) !== l.version) return undefined;
    versions.set(l.datasetId, l.version);
    if (l.rows) {
      if (![l.rows.json, l.rows.oddNumbers].every((n) => Number.isInteger(n) && n >= 0 && n < 2 ** 32)) return undefined;
      seen.push(l);
    }
  }
  if (datasetIds.some((id) => !versions.has(id))) return undefined;
  return { layouts: seen, versions };
}

/**
 * The places of the key in the layouts of the stored rows when every one of those layouts
 * holds it and none of their rows has its bit set (nor, for a `group by` key of a number, a
 * number other than an integer below 10^15); else undefined: some row needs the JSON.
 */
function placesWithoutJson(stored: readonly HotLayout[], pointer: string, group: boolean): HotPlace[] | undefined {
  const places: HotPlace[] = [];
  for (const l of stored) {
    const s = l.slots.find((x) => x.pointer === pointer);
    if (!s || !validPlace(s) || !l.rows) return undefined;
    if (has(Number(l.rows.json), s.slot)) return undefined;
    if (group && s.type === 'number' && has(Number(l.rows.oddNumbers), s.column)) return undefined;
    let place = places.find((p) => p.slot === s.slot && p.column === s.column && p.type === s.type);
    if (!place) places.push((place = { slot: s.slot, column: s.column, type: s.type, layouts: [] }));
    if (!place.layouts.includes(l.id)) place.layouts.push(l.id);
  }
  return places.length ? places : undefined;
}

/** The condition under which the row's value of the key is in this place's column. */
const held = (p: HotPlace): string => `(hot_layout IN (${p.layouts.join(', ')}) AND (hot_json & ${bit(p.slot)}) = 0)`;

/**
 * `CASE WHEN held THEN typed … ELSE json END`, or the JSON read alone when the key is not hot,
 * or the column alone when no row needs the JSON (`only`).
 * `json` is called once, after the typed branches, so its `?` keep their order in the text.
 */
function hotCase(
  reads: HotReads,
  pointer: string,
  typed: (p: HotPlace) => string | null,
  json: () => string,
  options: { extra?: (p: HotPlace) => string; group?: boolean } = {},
): string {
  const key = reads.keys.get(pointer);
  if (!key?.places.length) return json();
  const only = options.group ? key.onlyGroup : key.only;
  if (only?.length) {
    const values = only.map(typed);
    if (values.every((v): v is string => v !== null)) {
      if (values.length === 1) return values[0]!;
      // Rows in none of the first places are in the last one (the store's counts say so).
      const whens = only.slice(0, -1).map((p, i) => `WHEN hot_layout IN (${p.layouts.join(', ')}) THEN ${values[i]}`);
      return `(CASE ${whens.join(' ')} ELSE ${values[values.length - 1]} END)`;
    }
  }
  const branches = key.places.flatMap((p) => {
    const value = typed(p);
    return value === null ? [] : [`WHEN ${held(p)}${options.extra ? ` AND ${options.extra(p)}` : ''} THEN ${value}`];
  });
  if (!branches.length) return json();
  return `(CASE ${branches.join(' ')} ELSE ${json()} END)`;
}

/**
 * The key's one string column when every row the read sees holds the key there or not at all
 * (HotKeyReads.only, a single string place): then "the value is a string" is the column's
 * presence, which a comparison can test as `col IS NOT NULL` — two-valued, so it needs no
 * COALESCE, and DuckDB filters the column in its scan (with the CASE and the COALESCE around
 * it, DuckDB evaluated the expression per row instead: about three times the cost).
 */
export function hotOnlyStringColumn(reads: HotReads, pointer: string): string | undefined {
  const only = reads.keys.get(pointer)?.only;
  return only?.length === 1 && only[0]!.type === 'string' ? hotStringColumn(only[0]!.column) : undefined;
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
 * The group key: the value's JSON text as DuckDB writes it (duckdb-soql-group.ts). A string's is
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
    {
      extra: (p) => (p.type === 'number' ? `(${hotNumberColumn(p.column)} IS NULL OR (${hotNumberColumn(p.column)} = trunc(${hotNumberColumn(p.column)}) AND abs(${hotNumberColumn(p.column)}) < 1e15))` : 'TRUE'),
      group: true,
    },
  );

/**
 * Whether the store's counts a read relied on (HotReads.relied) are still those of the layouts
 * asked after it: then no row the read saw needed the JSON (every change is versioned before
 * its rows commit). ClickHouse's `group by` relies on the types of its key the same way
 * (clickhouse-soql-hot.ts).
 */
export function stillHolds(hot: { relied?: ReadonlyMap<string, string> } | undefined, layoutsAfter: readonly HotLayout[]): boolean {
  for (const [datasetId, version] of hot?.relied ?? []) {
    if (!layoutsAfter.some((l) => l.datasetId === datasetId && l.version === version)) return false;
  }
  return true;
}
