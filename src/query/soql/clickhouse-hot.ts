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
 * The SQL added is built from constants, column names `hot_[tsnj]<0–31>` and integers (layout
 * ids): no text of the query and no `?`.
 */
import type { HotLayout } from '../../engine/hot-columns.js';
import type { CompareOp, Expr, SoqlQuery, Value } from './ast.js';
import { datasetIdsFor } from './duckdb.js';
import { resolveTime } from './literals.js';

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
}

export const noClickHouseHotReads: ClickHouseHotReads = { dialect: 'clickhouse', places: new Map(), layouts: [] };

/** The rows a query can read: these datasets' rows with ts ≥ sinceMs (top-level conditions only). */
export interface ReadScope {
  datasetIds: readonly string[];
  sinceMs: number;
}

/** The scope of a query over the tenant's active datasets (name → id). */
export function readScope(query: SoqlQuery, ctx: { now: number; datasetIds: ReadonlyMap<string, string> }): ReadScope {
  let ids = new Set(ctx.datasetIds.values());
  let sinceMs = -Infinity;
  const items: Expr[] = !query.filter ? [] : query.filter.type === 'and' ? query.filter.items : [query.filter];
  for (const e of items) {
    if ((e.type !== 'compare' && e.type !== 'in') || e.field.kind !== 'canonical') continue;
    const compares: Array<{ op: CompareOp; value: Value }> = e.type === 'compare' ? [e] : e.values.map((value) => ({ op: '==', value }));
    const name = e.field.name;
    if (name === 'dataset') {
      const named = new Set<string>();
      for (const c of compares) {
        if (c.value.type !== 'text') return { datasetIds: [...ids], sinceMs };
        let hit: string[];
        try {
          hit = datasetIdsFor(ctx.datasetIds, c.op, c.value.text);
        } catch {
          hit = []; // not_found: the compiler says so
        }
        const negated = c.op === '!=' || c.op === '!:';
        for (const id of negated ? [...ctx.datasetIds.values()].filter((d) => !hit.includes(d)) : hit) named.add(id);
      }
      ids = new Set([...ids].filter((id) => named.has(id)));
    } else if (name === 'ts' && e.type === 'compare' && e.value.type === 'time' && (e.op === '>=' || e.op === '>')) {
      sinceMs = Math.max(sinceMs, resolveTime(e.value.time, ctx.now));
    }
  }
  return { datasetIds: [...ids], sinceMs };
}

const validSlot = (n: number): boolean => Number.isInteger(n) && n >= 0 && n <= 31;
const validId = (n: number): boolean => Number.isSafeInteger(n) && n >= 0 && n < 2 ** 32;

/**
 * The keys a read over `scope` may take from columns: those every layout of the scope's rows
 * (stored in range, or to be loaded: `current`) holds. None when any of those rows has no hot
 * keys (layout 0) or a layout is malformed.
 */
export function clickHouseHotReadsOf(layouts: readonly HotLayout[], scope: ReadScope): ClickHouseHotReads {
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
  return { dialect: 'clickhouse', places, layouts: [...new Set(seen.map((l) => l.id))].sort((a, b) => a - b) };
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
 * The key's JSON text (payload_json's element) from its hot columns: hot_j, or where the loader
 * left it '' (clickhouse-hot-layouts.ts hotJson) a plain string in quotes or an integer's digits.
 */
export function hotJsonOf(reads: ClickHouseHotReads | undefined, pointer: string): string | undefined {
  const [j, t, s, n] = (['j', 't', 's', 'n'] as const).map((kind) => hotColumnOf(reads, pointer, kind));
  if (!j) return undefined;
  return `multiIf(${j} != '', ${j}, ${t} = 1, concat('"', ${s}, '"'), ${t} = 2, toString(toInt64(${n})), '')`;
}
