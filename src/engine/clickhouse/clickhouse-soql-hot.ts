/**
 * Reading a payload key from its hot columns on ClickHouse (engine/clickhouse/
 * clickhouse-hot-layouts.ts). Slot i's columns hold exactly the flattened arrays' elements at
 * the key's path for every row loaded with a layout holding the key, so `hot_t<i>` replaces
 * `arrayElement(payload_types, indexOf(payload_paths, ?))` (and hot_s, hot_n, hot_j the text,
 * number and JSON arrays) with the same answer for those rows.
 *
 * A read uses the columns only when *every* row it can read carries such a layout: ClickHouse
 * 18.16 evaluates both branches of `if`, so a per-row fallback to the arrays would read them for
 * every row and gain nothing. The rows a read can see are those of the datasets its top-level
 * `dataset:` conditions leave (else every active dataset) with ts at or after its top-level
 * lower `ts` bound; hotLayouts says which layouts the stored rows of each dataset carry over
 * which ts range, and which layout its next rows get. One row without the key in that scope
 * (loaded before the key was hot, or a dataset without it) and the key reads the arrays, as
 * before. The filter then keeps only rows of the layouts it was compiled with
 * (`hot_layout IN (…)`): a row loaded afterwards under a layout made since (its key elsewhere)
 * is left out, never misread; the read-your-writes wait has loaded every row acknowledged
 * before the query into a layout the compile knew, unless the dataset's hot keys changed in
 * that moment (docs/events-engine.md).
 *
 * `group by` a hot key (hotGroupOf) groups first by the slot columns themselves — only those
 * that vary over the scope's rows, by the type codes hotLayouts reports per slot — and writes
 * the key's JSON text only for each of those groups; the store's SOQL read (soql-read.ts) runs it again
 * if the types it compiled with grew while it ran (a version per dataset, as on DuckDB).
 *
 * The SQL added is built from constants, column names `hot_[tsnj]<0–31>` and integers (layout
 * ids, type codes): no text of the query and no `?`.
 */
import type { CompiledGroupKey, TwoStepGroup } from '../event-store.js';
import type { HotLayout } from '../hot-columns.js';
import { payloadType } from './payload-paths.js';
import type { ReadScope } from '../../soql/scope.js';

/** Where a key is, per slot, with the layouts that put it there. */
interface Place {
  slot: number;
  layouts: number[];
}

export interface ClickHouseHotReads {
  readonly dialect: 'clickhouse';
  /** Per JSON pointer readable from columns: its places (one when every layout agrees). */
  readonly places: ReadonlyMap<string, readonly Place[]>;
  /** The layouts of every row the read can see; empty when no key is read from columns. */
  readonly layouts: readonly number[];
  /**
   * Per JSON pointer (the `group by` key's only), the type codes its rows in the scope hold (a
   * bit per payload type code); absent: any.
   */
  readonly types: ReadonlyMap<string, number>;
  /** The versions of the datasets' types (HotLayout.version) `types` relied on (soql-read.ts reruns when one changed). */
  readonly relied: ReadonlyMap<string, string>;
}

export const noClickHouseHotReads: ClickHouseHotReads = { dialect: 'clickhouse', places: new Map(), layouts: [], types: new Map(), relied: new Map() };

/** Every payload type code's bit (0 missing … 6 array): nothing known of the rows. */
const anyType = 0x7f;

const validSlot = (n: number): boolean => Number.isInteger(n) && n >= 0 && n <= 31;
const validId = (n: number): boolean => Number.isSafeInteger(n) && n >= 0 && n < 2 ** 32;

/**
 * The keys a read over `scope` may take from columns: those every layout of the scope's rows
 * (stored in range, or to be loaded: `current`) holds. None when any of those rows has no hot
 * keys (layout 0) or a layout is malformed. With `grouped` (the `group by` key's pointer), that
 * key's types over those layouts, when each dataset's are known and versioned.
 */
export function clickHouseHotReadsOf(layouts: readonly HotLayout[], scope: ReadScope, grouped?: string): ClickHouseHotReads {
  const datasets = new Set(scope.datasetIds);
  // A range that is not a number (malformed) counts as reaching the scope.
  const reaches = (l: HotLayout) => l.stored !== undefined && (typeof l.stored.maxTs !== 'number' || l.stored.maxTs >= scope.sinceMs);
  const seen = layouts.filter((l) => datasets.has(l.datasetId) && (l.current || reaches(l)));
  if (!seen.length || seen.some((l) => !l.slots.length || !validId(l.id) || l.slots.some((s) => !validSlot(s.slot)))) return noClickHouseHotReads;
  const places = new Map<string, Place[]>();
  for (const { pointer } of seen[0]!.slots) {
    if (places.has(pointer)) continue;
    const list: Place[] = [];
    let everywhere = true;
    for (const l of seen) {
      const s = l.slots.find((x) => x.pointer === pointer);
      if (!s) {
        everywhere = false;
        break;
      }
      let place = list.find((p) => p.slot === s.slot);
      if (!place) list.push((place = { slot: s.slot, layouts: [] }));
      if (!place.layouts.includes(l.id)) place.layouts.push(l.id);
    }
    if (everywhere) places.set(pointer, list);
  }
  if (!places.size) return noClickHouseHotReads;
  const ids = [...new Set(seen.map((l) => l.id))].sort((a, b) => a - b);
  const types = new Map<string, number>();
  const relied = new Map<string, string>();
  if (grouped !== undefined && places.has(grouped)) {
    const bits = typesOf(seen, grouped, relied);
    if (bits !== anyType) types.set(grouped, bits);
    else relied.clear();
  }
  return { dialect: 'clickhouse', places, layouts: ids, types, relied };
}

/**
 * The OR of the key's type bits over the layouts, noting each dataset's version in `relied`;
 * anyType when a layout's are unknown or malformed or a dataset's versions disagree.
 */
function typesOf(seen: readonly HotLayout[], pointer: string, relied: Map<string, string>): number {
  let bits = 0;
  for (const l of seen) {
    const slot = l.slots.find((s) => s.pointer === pointer)!.slot;
    const b = l.types?.[slot] ?? 0;
    const known = l.types !== undefined && Number.isInteger(b) && b >= 0 && b <= anyType;
    if (!known || typeof l.version !== 'string' || (relied.get(l.datasetId) ?? l.version) !== l.version) return anyType;
    relied.set(l.datasetId, l.version);
    bits |= b;
  }
  return bits;
}

export type HotColumnKind = 't' | 's' | 'n' | 'j';

/** The column holding the key's type (t), text (s), number (n) or JSON text (j); undefined: read the arrays. */
export function hotColumnOf(reads: ClickHouseHotReads | undefined, pointer: string, kind: HotColumnKind): string | undefined {
  const places = reads?.places.get(pointer);
  if (!places?.length) return undefined;
  const last = places[places.length - 1]!;
  if (places.length === 1) return `hot_${kind}${last.slot}`;
  // Only hot columns: both branches of multiIf are read for every row, and they are cheap.
  const branches = places.slice(0, -1).map((p) => `hot_layout IN (${p.layouts.join(', ')}), hot_${kind}${p.slot}`);
  return `multiIf(${branches.join(', ')}, hot_${kind}${last.slot})`;
}

/** The filter's guard: only rows of the layouts the read was compiled with (undefined: no column read). */
export function hotGuard(reads: ClickHouseHotReads | undefined): string | undefined {
  return reads?.places.size ? `hot_layout IN (${reads.layouts.join(', ')})` : undefined;
}

/**
 * A node's JSON text (payload_json's element) from a slot's four values: hot_j, or where the
 * loader left it '' (clickhouse-hot-layouts.ts hotJson) a plain string in quotes or an integer's
 * digits. 18.16 evaluates every branch for every row.
 */
const jsonText = (t: string, s: string, n: string, j: string): string =>
  `multiIf(${j} != '', ${j}, ${t} = ${payloadType.string}, concat('"', ${s}, '"'), ${t} = ${payloadType.number}, toString(toInt64(${n})), '')`;

/** The `group by` key from a node's JSON text: NULL for a missing node ('') and a JSON null (clickhouse-soql-group.ts). */
export const groupValue = (json: string): string => `nullIf(nullIf(${json}, 'null'), '')`;

/** The key's JSON text from its hot columns (undefined: read the arrays). */
export function hotJsonOf(reads: ClickHouseHotReads | undefined, pointer: string): string | undefined {
  const [t, s, n, j] = (['t', 's', 'n', 'j'] as const).map((kind) => hotColumnOf(reads, pointer, kind));
  return t && s && n && j ? jsonText(t, s, n, j) : undefined;
}

const bit = (code: number): number => 1 << code;

/**
 * `group by` a hot key in two steps (CompiledGroupKey.twoStep): first by the slot columns that
 * vary over the scope's rows, then by the JSON text written once per such group. Which vary,
 * from the key's type bits (any when unknown), by what the loader writes (payload-paths.ts):
 * the type when there are several; the text for strings and booleans ('' otherwise); the
 * number for numbers (0 otherwise); the JSON text for objects and arrays. A scalar's JSON text
 * is JSON.stringify of the value its type, text and number hold exactly, so within a group of
 * equal (type, text, number) any row's hot_j gives the group's text (hot_j is '' or that text).
 * Groups of the same text (say, hot_j '' and hot_j '"a"' for "a") are summed by the engine, so
 * the answer is the one-step key's. Undefined: the key is not read from columns.
 */
export function hotGroupOf(reads: ClickHouseHotReads | undefined, pointer: string): CompiledGroupKey['twoStep'] {
  const [t, s, n, j] = (['t', 's', 'n', 'j'] as const).map((kind) => hotColumnOf(reads, pointer, kind));
  if (!t || !s || !n || !j) return undefined;
  const types = reads!.types.get(pointer) ?? anyType;
  const group = twoStepOf(t, s, n, j, types);
  // Narrowed by what this process knows: checked against the rows' types (CompiledGroupKey).
  return types === anyType ? group : { ...group, assumed: { typeColumn: t, bits: types, exact: twoStepOf(t, s, n, j, anyType) } };
}

function twoStepOf(t: string, s: string, n: string, j: string, types: number): TwoStepGroup {
  // The codes present: 0 (missing) and payloadType's.
  const codes = [0, ...Object.values(payloadType)].filter((c) => types & bit(c));
  const varies = {
    t: codes.length !== 1,
    s: (types & (bit(payloadType.string) | bit(payloadType.boolean))) !== 0,
    n: (types & bit(payloadType.number)) !== 0,
    j: (types & (bit(payloadType.object) | bit(payloadType.array))) !== 0,
  };
  // Missing (0) or null alone: the type is the key (one group, or none without rows).
  if (!varies.s && !varies.n && !varies.j) varies.t = true;
  const columns: string[] = [];
  const keys: string[] = [];
  const keyed = (sql: string, alias: string): string => {
    columns.push(`${sql} AS ${alias}`);
    keys.push(alias);
    return alias;
  };
  const tSql = varies.t ? keyed(t, 'key_t') : String(codes[0]);
  const sSql = varies.s ? keyed(s, 'key_s') : "''";
  const nSql = varies.n ? keyed(n, 'key_n') : '0';
  if (varies.j) keyed(j, 'key_j');
  else columns.push(`any(${j}) AS key_j`);
  return { columns, keys, value: groupValue(jsonText(tSql, sSql, nSql, 'key_j')) };
}
