/**
 * Hot payload keys on ClickHouse (docs/events-engine.md "Hot payload keys"). A
 * dataset's hot keys get typed columns the SOQL compiler reads instead of the flattened payload
 * arrays (payload-paths.ts), which every row holds in full.
 *
 * Columns. A layout puts each key in a *slot* (0–31); slot i is four columns, exactly the four
 * elements the arrays hold at the key's path (flattenPayload, looked up with indexOf as the
 * compiler's `indexOf(payload_paths, ?)` does):
 *   hot_t<i> UInt8   = payload_types[k]    (0: the key is missing)
 *   hot_s<i> String  = payload_text[k]     (a string; 'true'/'false' for a boolean; else '')
 *   hot_n<i> Float64 = payload_numbers[k]  (a number; else 0)
 *   hot_j<i> String  = payload_json[k]     (the node's JSON text: `group by` keys), '' where
 *                      the reader writes it from the others (hotJson: plain strings, integers)
 * and, per row, `hot_layout UInt32`: the layout the row was loaded with (0: none). So a slot
 * column holds whatever type the value has (no "other type" rows to send to the JSON, unlike
 * DuckDB's), and replacing an array read by the column is exact by construction for every
 * row loaded with a layout holding the key. The slots are shared by the datasets (32 at most,
 * whatever the number of datasets); a key keeps its slot as long as it stays hot, even when its
 * type changes. Columns are added (ALTER TABLE ADD COLUMN, on every host's MergeTree table and
 * Distributed table, a change of metadata only: older parts read the defaults) when a layout
 * first needs them, so a store without hot keys has none of them.
 *
 * Why not a CASE per row as on DuckDB: ClickHouse 18.16 evaluates both branches of `if` and
 * `multiIf` for every row, so a fallback to the arrays in the same expression would read and
 * search them for every row anyway. Instead a read uses the columns only when every row it can
 * read carries a layout holding the key (`hotLayouts` tells which layouts the rows of each
 * dataset carry, and over which ts range), and the arrays otherwise (clickhouse-soql-hot.ts).
 *
 * Layouts are kept in `event_hot_layouts` (first host) and in memory; the ts ranges of the rows
 * per (dataset, layout) are asked of the table once per dataset (then kept up to date by the
 * loads, and asked again after a retention delete).
 *
 * Types. With the ranges, the table is asked which type codes each slot's rows hold (`types`,
 * a bit per code), and each load adds those of its rows *before* its INSERT, bumping the
 * dataset's `version` when a bit is new: `group by` groups by the slot columns those types
 * leave varying (clickhouse-soql-hot.ts hotGroupOf), and the store's SOQL read runs a
 * query again when the version it compiled with changed while it ran. Types only grow (a
 * retention delete leaves them: conservative).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { maxHotKeys, type HotKey, type HotLayout, type HotSlot } from '../hot-columns.js';
import type { SqlValue } from './literal.js';
import { payloadType, type FlatPayload } from './payload-paths.js';
import type { RowBinaryWriter } from './row-binary.js';
import { BatchReader } from '../wal/event-batch.js';
import type { LoadRecord } from '../engine.js';

/** The four columns of slot i, with their ClickHouse types (their defaults are the arrays' "missing"). */
export const hotSlotColumns = (slot: number): Array<{ name: string; type: string }> => [
  { name: `hot_t${slot}`, type: 'UInt8' },
  { name: `hot_s${slot}`, type: 'String' },
  { name: `hot_n${slot}`, type: 'Float64' },
  { name: `hot_j${slot}`, type: 'String' },
];

/** Whether a column of `events` is a hot column (one this file names). */
export const isClickHouseHotColumn = (name: string): boolean => /^hot_(?:layout|[tsnj](?:[12]?\d|3[01]))$/.test(name);

/**
 * The next layout's slots: a key already hot keeps its slot whatever its type now (the columns
 * hold every type); new keys take the lowest free slots. `column` is the slot. Undefined when
 * `keys` are the current keys with the same types.
 */
export function clickHouseSlots(current: readonly HotSlot[], keys: readonly HotKey[]): HotSlot[] | undefined {
  const seen = new Set<string>();
  const wanted = keys.filter((k) => !seen.has(k.pointer) && seen.add(k.pointer)).slice(0, maxHotKeys);
  const same = wanted.length === current.length && wanted.every((k) => current.some((s) => s.pointer === k.pointer && s.type === k.type));
  if (same) return undefined;
  const used = new Set<number>();
  const slots: HotSlot[] = [];
  for (const k of wanted) {
    const kept = current.find((s) => s.pointer === k.pointer);
    if (kept) {
      slots.push({ ...k, slot: kept.slot, column: kept.slot });
      used.add(kept.slot);
    }
  }
  for (const k of wanted) {
    if (current.some((s) => s.pointer === k.pointer)) continue;
    let slot = 0;
    while (used.has(slot)) slot++;
    used.add(slot);
    slots.push({ ...k, slot, column: slot });
  }
  return slots.sort((a, b) => a.slot - b.slot);
}

/**
 * hot_j's value for a node: its JSON text, or '' when the reader can write it from the other
 * columns (clickhouse-soql-hot.ts `hotJsonOf`): a string whose JSON is itself in quotes (no `"`, `\`,
 * control character or lone surrogate), a safe integer below 10^15 (its digits). A string's or
 * number's JSON is never '', so '' is unambiguous for them; this keeps the column from holding
 * every string twice.
 */
export function hotJson(type: number, text: string, number: number, json: string): string {
  if (type === payloadType.string && json.length === text.length + 2 && json === `"${text}"`) return '';
  if (type === payloadType.number && Number.isSafeInteger(number) && Math.abs(number) < 1e15 && json === String(number)) return '';
  return json;
}

/** One row's values of the slot columns, from its flattened payload (the arrays' element at the key's path). */
export function writeHotSlot(rows: RowBinaryWriter, flat: FlatPayload, pointer: string | undefined): number {
  const k = pointer === undefined ? -1 : flat.paths.indexOf(pointer);
  if (k < 0) {
    rows.uint8(0);
    rows.uint8(0); // '' (a zero length)
    rows.float64(0);
    rows.uint8(0);
    return 0;
  }
  const type = flat.types[k]!;
  const text = flat.text[k]!;
  rows.uint8(type);
  rows.string(text);
  rows.float64(flat.numbers[k]!);
  rows.string(hotJson(type, text, flat.numbers[k]!, flat.json[k]!));
  return type;
}

/** Type bits (1 << payload type code) per slot (indexed by slot), per layout id. */
type Types = Map<number, number[]>;

/** ORs `bits` (per slot) into the layout's types; whether a bit was new. */
function addTypes(into: Types, layout: number, bits: readonly number[]): boolean {
  const known = into.get(layout) ?? [];
  into.set(layout, known);
  let grew = false;
  bits.forEach((b, slot) => {
    const merged = (known[slot] ?? 0) | (b ?? 0);
    if (merged !== (known[slot] ?? 0)) grew = true;
    known[slot] = merged;
  });
  for (let slot = 0; slot < known.length; slot++) known[slot] ??= 0;
  return grew;
}

type Range = { minTs: number; maxTs: number };
type Ranges = Map<number, Range>;

const widen = (ranges: Ranges, layout: number, range: Range): void => {
  const r = ranges.get(layout);
  if (!r) ranges.set(layout, { ...range });
  else {
    r.minTs = Math.min(r.minTs, range.minTs);
    r.maxTs = Math.max(r.maxTs, range.maxTs);
  }
};

/** What the layouts need of the engine: its hosts, tables and statements. */
export interface HotLayoutsHost {
  clients: readonly ClickHouseClient[];
  db: string;
  /** The MergeTree table of each host (events_local in a cluster). */
  table: string;
  cluster: string | undefined;
  command(client: ClickHouseClient, sql: string): Promise<void>;
  select<T>(client: ClickHouseClient, sql: string, params: readonly SqlValue[]): Promise<T[]>;
  /** The loaded positions of the other ingesters' logs (event_loaders), to tell whether any is loading. */
  peerPositions(): Promise<Record<string, number>>;
  /**
   * How long after a dataset's layout changes the other ingesters may still load its rows with
   * an older one (they take the metadata's keys at their next tick: OPS_HOT_KEYS_INTERVAL_MS).
   */
  graceMs: number;
}

/** Layout ids read again from the table at each refresh below the highest known (a late insert of another process). */
const refreshBack = 100;
/** The table's layouts are read again at most this often (set() refreshes before it decides). */
export const refreshEveryMs = 1_000;
/** Other ingesters' positions are read again at most this often while a grace needs them. */
const peersEveryMs = 5_000;

export class ClickHouseHotLayouts {
  private readonly byDataset = new Map<string, HotLayout[]>();
  private readonly byId = new Map<number, HotLayout>();
  private lastId = 0;
  /** Hot columns of `events` (first host's MergeTree table). */
  private columns = new Set<string>();
  /** Per dataset: ts ranges of the rows per layout, as the table told (undefined: not asked yet). */
  private readonly asked = new Map<string, Ranges>();
  /** Per dataset: ts ranges of the rows this process loaded (kept beside `asked`, which may miss them). */
  private readonly loaded = new Map<string, Ranges>();
  /** Per dataset: bumped when its rows are deleted, so an answer asked before is not kept. */
  private readonly generation = new Map<string, number>();
  /** Per dataset: the type bits of its rows' slots as the table told (set with `asked`). */
  private readonly askedTypes = new Map<string, Types>();
  /** Per dataset: those of the rows this process loaded, added before each INSERT (never forgotten). */
  private readonly landedTypes = new Map<string, Types>();
  /** Per dataset: the version of its types (HotLayout.version), `<this open>.<n>`, changed when a bit is new. */
  private readonly versions = new Map<string, string>();
  private readonly opened = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  private versionCount = 0;
  private changes: Promise<unknown> = Promise.resolve();
  /**
   * Loads whose rows may be landing now, by the last layout id when each took its layouts: their
   * rows are in no range yet, so a read counts them as possibly there (a load that threw before
   * its INSERT stays here: reads are then only more careful).
   */
  private readonly active = new Map<HotLoad, number>();
  /**
   * Ids two processes gave to different layouts at the same moment (each read the same highest
   * id): no read takes a column through them (their rows read the arrays) and no load uses them.
   */
  private readonly collided = new Set<number>();
  private refreshedAt = 0;
  /** Per dataset: when this process learned of its current layout (made it, or read it from the table). */
  private readonly changedAt = new Map<string, number>();
  /** Per dataset whose grace ran out: its ranges were asked of the table again since (rows the other ingesters loaded meanwhile). */
  private readonly afterGrace = new Set<string>();
  /** The other logs' positions as last read, and when each last moved (the first reading counts as a move). */
  private peers = new Map<string, { position: number; movedAt: number }>();
  private peersReadAt = 0;

  private constructor(private readonly host: HotLayoutsHost) {}

  static async open(host: HotLayoutsHost): Promise<ClickHouseHotLayouts> {
    const layouts = new ClickHouseHotLayouts(host);
    const first = host.clients[0]!;
    const rows = await host.select<{ id: number; dataset_id: string; slots: string }>(first, `SELECT id, dataset_id, slots FROM ${host.db}.event_hot_layouts ORDER BY id`, []);
    // What the table holds at start is no change: the ranges asked next show every ingester's rows.
    for (const r of rows) layouts.add({ id: Number(r.id), datasetId: r.dataset_id, slots: JSON.parse(r.slots) as HotSlot[] }, false);
    layouts.columns = await layouts.columnsOf(first, host.table);
    return layouts;
  }

  private async columnsOf(client: ClickHouseClient, table: string): Promise<Set<string>> {
    const rows = await this.host.select<{ name: string }>(client, 'SELECT name FROM system.columns WHERE database = ? AND table = ?', [this.host.db, table]);
    return new Set(rows.map((r) => r.name).filter(isClickHouseHotColumn));
  }

  /**
   * Adds a layout in id order (another process's may come after ours with a lower id), or notes a
   * collision. `change`: a dataset whose current layout it becomes starts its grace.
   */
  private add(layout: HotLayout, change = true): void {
    const known = this.byId.get(layout.id);
    if (known) {
      if (known.datasetId !== layout.datasetId || JSON.stringify(known.slots) !== JSON.stringify(layout.slots)) this.collided.add(layout.id);
      return;
    }
    this.byId.set(layout.id, layout);
    const list = this.byDataset.get(layout.datasetId) ?? [];
    const before = this.current(layout.datasetId);
    let at = list.length;
    while (at > 0 && list[at - 1]!.id > layout.id) at--;
    list.splice(at, 0, layout);
    this.byDataset.set(layout.datasetId, list);
    this.lastId = Math.max(this.lastId, layout.id);
    if (change && this.current(layout.datasetId) !== before) this.changed(layout.datasetId);
  }

  private changed(datasetId: string): void {
    this.changedAt.set(datasetId, Date.now());
    this.afterGrace.delete(datasetId);
  }

  /** The layout the dataset's rows are loaded with now (undefined: none, hot_layout 0). */
  current(datasetId: string): HotLayout | undefined {
    const list = this.byDataset.get(datasetId)?.filter((l) => !this.collided.has(l.id));
    const last = list?.[list.length - 1];
    return last?.slots.length ? last : undefined;
  }

  /**
   * Reads the layouts other processes added to the table (every ingester loads with the
   * metadata's keys, and the process that changes them first makes the layout: the others
   * adopt it rather than make their own). The last `refreshBack` ids are read again, so a
   * collision shows.
   */
  private async refresh(force = false): Promise<void> {
    if (!force && Date.now() - this.refreshedAt < refreshEveryMs) return;
    this.refreshedAt = Date.now();
    const rows = await this.host.select<{ id: number; dataset_id: string; slots: string }>(
      this.host.clients[0]!,
      `SELECT id, dataset_id, slots FROM ${this.host.db}.event_hot_layouts WHERE id > ? ORDER BY id`,
      [Math.max(0, this.lastId - refreshBack)],
    );
    for (const r of rows) this.add({ id: Number(r.id), datasetId: r.dataset_id, slots: JSON.parse(r.slots) as HotSlot[] });
  }

  /**
   * Whether other ingesters may still be loading the dataset's rows with an older layout: its
   * layout changed less than graceMs ago and another log has loaded within graceMs. Until then
   * a read counts every older layout as present over any ts (their rows go to the arrays).
   */
  async inGrace(datasetId: string): Promise<boolean> {
    const changed = this.changedAt.get(datasetId);
    if (changed === undefined || Date.now() - changed >= this.host.graceMs) return false;
    return this.peersLoading();
  }

  private async peersLoading(): Promise<boolean> {
    const now = Date.now();
    if (now - this.peersReadAt >= peersEveryMs) {
      this.peersReadAt = now;
      const read = await this.host.peerPositions();
      const next = new Map<string, { position: number; movedAt: number }>();
      for (const [log, position] of Object.entries(read)) {
        const had = this.peers.get(log);
        next.set(log, { position, movedAt: had && had.position === position ? had.movedAt : now });
      }
      this.peers = next;
    }
    return [...this.peers.values()].some((p) => now - p.movedAt < this.host.graceMs);
  }

  /**
   * Makes `keys` the dataset's hot keys for rows loaded from now on (no-op when they are): adds
   * the columns the layout needs on every host (MergeTree table first, then the Distributed
   * one), stores the layout, and only then lets loads use it. One change at a time.
   */
  set(datasetId: string, keys: readonly HotKey[]): Promise<void> {
    const run = this.changes.then(() => this.setNow(datasetId, keys));
    this.changes = run.catch(() => undefined);
    return run;
  }

  private async setNow(datasetId: string, keys: readonly HotKey[]): Promise<void> {
    await this.refresh();
    for (let attempt = 1; ; attempt++) {
      const slots = clickHouseSlots(this.current(datasetId)?.slots ?? [], keys);
      if (!slots) return;
      // Another process may have made this dataset's layout for these keys since: read again first.
      if (attempt === 1) {
        await this.refresh(true);
        if (!clickHouseSlots(this.current(datasetId)?.slots ?? [], keys)) return;
      }
      if (await this.make(datasetId, slots)) return;
      if (attempt >= 10) throw new Error(`hot keys of dataset ${datasetId}: ten layout ids in a row were taken by other processes at the same moment`);
      // Both makers may have seen the collision: apart, the next ids differ.
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 90 * attempt));
      await this.refresh(true);
    }
  }

  /** Makes the layout (false: its id was taken by another process's at the same moment; made again with another). */
  private async make(datasetId: string, slots: HotSlot[]): Promise<boolean> {
    const needed = [{ name: 'hot_layout', type: 'UInt32' }, ...slots.flatMap((s) => hotSlotColumns(s.slot))];
    if (needed.some((c) => !this.columns.has(c.name))) {
      const tables = this.host.cluster ? [this.host.table, 'events'] : [this.host.table];
      // Checked per host and table: a change cut short by a crash is completed, never repeated.
      for (const client of this.host.clients) {
        for (const table of tables) {
          const has = await this.columnsOf(client, table);
          const missing = needed.filter((c) => !has.has(c.name));
          if (missing.length) {
            await this.host.command(client, `ALTER TABLE ${this.host.db}.${table} ${missing.map((c) => `ADD COLUMN ${c.name} ${c.type}`).join(', ')}`);
          }
        }
      }
      for (const c of needed) this.columns.add(c.name);
    }
    // The next id after the table's highest (every process reads it just before): two processes
    // making layouts at the same moment may take the same id, which the read after the INSERT shows.
    const [top] = await this.host.select<{ id: number }>(this.host.clients[0]!, `SELECT toUInt32(max(id)) AS id FROM ${this.host.db}.event_hot_layouts`, []);
    const layout: HotLayout = { id: Math.max(this.lastId, Number(top?.id ?? 0)) + 1, datasetId, slots };
    const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    await this.host.command(this.host.clients[0]!, `INSERT INTO ${this.host.db}.event_hot_layouts (id, dataset_id, slots) VALUES (${layout.id}, ${quote(datasetId)}, ${quote(JSON.stringify(slots))})`);
    const same = await this.host.select<{ dataset_id: string; slots: string }>(this.host.clients[0]!, `SELECT dataset_id, slots FROM ${this.host.db}.event_hot_layouts WHERE id = ?`, [layout.id]);
    const taken = same.some((r) => r.dataset_id !== datasetId || r.slots !== JSON.stringify(slots));
    if (taken) {
      // Given up: no load uses it, and a read sees the id as collided (its rows, if the other
      // process loads any, read the arrays; the backfill moves them to a layout of their own).
      this.collided.add(layout.id);
      this.lastId = Math.max(this.lastId, layout.id);
      return false;
    }
    this.add(layout);
    return true;
  }

  /**
   * The writer of one load's hot columns: only the slots the current layouts of the load's
   * datasets use (the INSERT leaves the others, and hot_layout when none has one, to their
   * defaults), so a load of datasets without hot keys writes what it wrote before.
   */
  forLoad(records: readonly LoadRecord[]): HotLoad {
    // The layouts are taken now: one made while the rows are built waits for the next load.
    const layouts = new Map<string, HotLayout>();
    if (!this.byDataset.size || !this.columns.has('hot_layout')) return this.started(new HotLoad(this, layouts, [], ''));
    const datasets = new Set<string>();
    for (const { body } of records) {
      const batch = new BatchReader(body);
      while (batch.next()) datasets.add(batch.datasetId);
    }
    const used = new Set<number>();
    for (const d of datasets) {
      const layout = this.current(d);
      if (layout) layouts.set(d, layout);
      for (const s of layout?.slots ?? []) used.add(s.slot);
    }
    if (!layouts.size) return this.started(new HotLoad(this, layouts, [], ''));
    const slots = [...used].sort((a, b) => a - b);
    return this.started(new HotLoad(this, layouts, slots, `, hot_layout${slots.flatMap((slot) => hotSlotColumns(slot).map((c) => `, ${c.name}`)).join('')}`));
  }

  private started(load: HotLoad): HotLoad {
    this.active.set(load, this.lastId);
    return load;
  }

  /** A load's rows are stored (or may be, after a failed INSERT): their ranges count from now on. */
  recordLoaded(load: HotLoad, ranges: ReadonlyMap<string, Ranges>): void {
    this.active.delete(load);
    for (const [datasetId, byLayout] of ranges) {
      const mine = this.loaded.get(datasetId) ?? new Map<number, Range>();
      for (const [layout, range] of byLayout) widen(mine, layout, range);
      this.loaded.set(datasetId, mine);
    }
  }

  /**
   * A load's rows are about to be sent: their types count from now on, and a dataset whose
   * types grew gets a new version before any of those rows can be read.
   */
  recordLanding(types: ReadonlyMap<string, Types>): void {
    for (const [datasetId, byLayout] of types) {
      // Rows without hot keys (layout 0) have no slots: nothing to note.
      if (![...byLayout.values()].some((bits) => bits.length)) continue;
      const known = this.landedTypes.get(datasetId) ?? new Map<number, number[]>();
      this.landedTypes.set(datasetId, known);
      let grew = false;
      for (const [layout, bits] of byLayout) if (addTypes(known, layout, bits)) grew = true;
      if (grew) this.versions.set(datasetId, `${this.opened}.${++this.versionCount}`);
    }
  }

  /** Rows of the dataset were deleted: its ranges are asked of the table again (its types stay: fewer rows, no new type). */
  forget(datasetId: string): void {
    this.generation.set(datasetId, (this.generation.get(datasetId) ?? 0) + 1);
    this.asked.delete(datasetId);
    this.askedTypes.delete(datasetId);
    this.loaded.delete(datasetId);
  }

  /**
   * For a read over these datasets: per dataset, every layout its stored rows carry (with their
   * ts range and, when known, their types; layout 0, no slots, for rows loaded without hot keys)
   * and the layout its next rows get (`current`), each with the dataset's `version`. A dataset
   * that never had hot keys: layout 0, current.
   */
  async forRead(tenantKey: string, datasetIds: readonly string[]): Promise<HotLayout[]> {
    // A grace that ran out: the ranges are asked again, with the rows other ingesters loaded
    // under older layouts meanwhile.
    const graced = new Set<string>();
    for (const d of datasetIds) {
      const changed = this.changedAt.get(d);
      if (changed === undefined || this.afterGrace.has(d)) continue;
      if (Date.now() - changed >= this.host.graceMs) {
        this.forget(d);
        this.afterGrace.add(d);
      } else if (await this.inGrace(d)) graced.add(d);
    }
    const withLayouts = datasetIds.filter((d) => this.byDataset.has(d));
    const unknown = withLayouts.filter((d) => !this.asked.has(d));
    if (unknown.length) {
      const generations = new Map(unknown.map((d) => [d, this.generation.get(d) ?? 0]));
      // The type codes of every slot the datasets' layouts use (a bit per code: groupBitOr).
      const slots = [...new Set(unknown.flatMap((d) => this.byDataset.get(d)!.flatMap((l) => l.slots.map((s) => s.slot))))].sort((a, b) => a - b);
      const rows = await this.host.select<Record<string, string | number>>(
        this.host.clients[0]!,
        `SELECT dataset_id, hot_layout AS layout, toString(min(ts)) AS min_ts, toString(max(ts)) AS max_ts` +
          slots.map((slot) => `, groupBitOr(bitShiftLeft(toUInt8(1), hot_t${slot})) AS types${slot}`).join('') +
          ` FROM ${this.host.db}.events WHERE tenant = ? AND dataset_id IN (${unknown.map(() => '?').join(', ')}) GROUP BY dataset_id, layout`,
        [tenantKey, ...unknown],
      );
      const fresh = new Map<string, Ranges>(unknown.map((d) => [d, new Map()]));
      const freshTypes = new Map<string, Types>(unknown.map((d) => [d, new Map()]));
      for (const r of rows) {
        const d = String(r['dataset_id']);
        const layout = Number(r['layout']);
        widen(fresh.get(d)!, layout, { minTs: Number(r['min_ts']), maxTs: Number(r['max_ts']) });
        const bits: number[] = [];
        for (const s of this.byDataset.get(d)!.find((l) => l.id === layout)?.slots ?? []) bits[s.slot] = Number(r[`types${s.slot}`]);
        addTypes(freshTypes.get(d)!, layout, bits);
      }
      for (const [d, ranges] of fresh) {
        if ((this.generation.get(d) ?? 0) !== generations.get(d)) continue;
        this.asked.set(d, ranges);
        this.askedTypes.set(d, freshTypes.get(d)!);
      }
    }
    const out: HotLayout[] = [];
    for (const d of datasetIds) {
      const list = this.byDataset.get(d);
      const current = this.current(d);
      if (!list) {
        out.push({ id: 0, datasetId: d, slots: [], current: true });
        continue;
      }
      const ranges = new Map<number, Range>();
      for (const source of [this.asked.get(d), this.loaded.get(d)]) for (const [id, r] of source ?? []) widen(ranges, id, r);
      // Not asked (the answer came after a delete): every layout may have rows, over any ts.
      // (Safe integers, not ±Infinity: the answer crosses the events node as JSON.)
      const anyTs = { minTs: -Number.MAX_SAFE_INTEGER, maxTs: Number.MAX_SAFE_INTEGER };
      if (!this.asked.has(d)) for (const id of [0, ...list.map((l) => l.id)]) widen(ranges, id, anyTs);
      // Loads in flight: the dataset's rows in them carry the layout that was current when they started.
      for (const epoch of new Set(this.active.values())) {
        const then = list.filter((l) => l.id <= epoch && !this.collided.has(l.id)).pop();
        widen(ranges, then?.slots.length ? then.id : 0, anyTs);
      }
      // Within the grace of a change, other ingesters may still load with any older layout.
      if (graced.has(d)) for (const l of [{ id: 0 }, ...list]) if (l.id !== current?.id) widen(ranges, l.id, anyTs);
      // A collided id's rows read the arrays (no slots).
      const byId = new Map(list.filter((l) => !this.collided.has(l.id)).map((l) => [l.id, l]));
      const version = this.versions.get(d) ?? `${this.opened}.0`;
      // Known when the table told them (else any): its answer, and what this process loaded since.
      const typesOf = (id: number): { types?: number[] } => {
        if (!this.askedTypes.has(d)) return {};
        const types = new Map<number, number[]>();
        for (const source of [this.askedTypes.get(d), this.landedTypes.get(d)]) {
          const bits = source?.get(id);
          if (bits) addTypes(types, id, bits);
        }
        return { types: types.get(id) ?? [] };
      };
      for (const [id, stored] of ranges) {
        const layout = byId.get(id);
        out.push({ id, datasetId: d, slots: layout?.slots ?? [], stored, ...typesOf(id), version, ...((current?.id ?? 0) === id ? { current: true } : {}) });
      }
      if (!ranges.has(current?.id ?? 0)) out.push({ id: current?.id ?? 0, datasetId: d, slots: current?.slots ?? [], ...typesOf(current?.id ?? 0), version, current: true });
    }
    return out;
  }
}

/** One load's hot columns: the INSERT's extra columns, each row's values, and the rows' ranges. */
export class HotLoad {
  /** `, hot_layout, hot_t0, …` for the INSERT's column list ('' without hot columns). */
  readonly columns: string;
  private readonly ranges = new Map<string, Ranges>();
  private lastDataset: string | undefined;
  private lastLayout: HotLayout | undefined;
  private lastRanges: Ranges = new Map();
  /** The pointer of each written slot in the last dataset's layout. */
  private pointers: Array<string | undefined> = [];
  /** Per dataset, per layout: the type bits of the rows' slots (indexed by slot). */
  private readonly types = new Map<string, Types>();
  private lastTypes: number[] = [];

  constructor(
    private readonly layouts: ClickHouseHotLayouts,
    /** Each dataset's layout for this load (none: layout 0). */
    private readonly current: ReadonlyMap<string, HotLayout>,
    private readonly slots: readonly number[],
    columns: string,
  ) {
    this.columns = columns;
  }

  /** Writes the row's hot columns (after its other columns) and counts its ts. */
  write(rows: RowBinaryWriter, datasetId: string, ts: number, flat: FlatPayload | undefined): void {
    if (datasetId !== this.lastDataset) {
      this.lastDataset = datasetId;
      this.lastLayout = this.current.get(datasetId);
      this.pointers = this.slots.map((slot) => this.lastLayout?.slots.find((s) => s.slot === slot)?.pointer);
      this.lastRanges = this.ranges.get(datasetId) ?? new Map<number, Range>();
      this.ranges.set(datasetId, this.lastRanges);
      const types = this.types.get(datasetId) ?? new Map<number, number[]>();
      this.types.set(datasetId, types);
      const layoutId = this.lastLayout?.id ?? 0;
      this.lastTypes = types.get(layoutId) ?? [];
      types.set(layoutId, this.lastTypes);
    }
    const id = this.lastLayout?.id ?? 0;
    const range = this.lastRanges.get(id);
    if (!range) this.lastRanges.set(id, { minTs: ts, maxTs: ts });
    else if (ts < range.minTs) range.minTs = ts;
    else if (ts > range.maxTs) range.maxTs = ts;
    if (!this.columns) return;
    rows.uint32(id);
    this.pointers.forEach((pointer, i) => {
      const type = writeHotSlot(rows, flat!, pointer);
      if (pointer !== undefined) {
        const slot = this.slots[i]!;
        this.lastTypes[slot] = (this.lastTypes[slot] ?? 0) | (1 << type);
      }
    });
  }

  /** Before the INSERT: the rows' types count from now on (the dataset's version changes when one is new). */
  landing(): void {
    this.layouts.recordLanding(this.types);
  }

  /** After the INSERT, whether it succeeded or not (a failed one may have stored some rows). */
  done(): void {
    this.layouts.recordLoaded(this, this.ranges);
  }
}
