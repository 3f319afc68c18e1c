import { randomUUID } from 'node:crypto';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { hotColumnsOf, hotColumnType, isHotColumn, nextSlots, type HotKey, type HotLayout, type HotSlot } from '../hot-columns.js';

/** What a dataset's stored rows of one layout need (HotLayout.rows). */
export interface LayoutRows {
  json: number;
  oddNumbers: number;
}

/** A dataset's stored rows, by layout (0: loaded without hot keys), and their version. */
export interface DatasetRows {
  version: string;
  byLayout: Map<number, LayoutRows>;
}

/**
 * Every hot-key layout of the DuckDB store (hot-columns.ts), kept in `event_hot_layouts` and in
 * memory, and the hot columns `events` has. The loader asks `current(datasetId)` and `columns`
 * for each chunk. `set` runs on the loader's connection between two loads (the engine
 * serialises them): it adds the columns a new layout needs (ALTER TABLE, which an open append
 * would conflict with) and stores the layout, both committed before any row names it. Layout
 * ids grow across the store and are never reused.
 *
 * It also knows, for each dataset that has had hot keys, which layouts its stored rows carry and
 * the OR of their hot_json bits (HotLayout.rows): counted from the table when the store opens,
 * when a dataset gets its first layout and after a retention delete, and grown by the loader
 * (noteRows) before each load commits. A read over rows none of which needs the JSON for a key
 * leaves the JSON out of the SQL (duckdb-soql-hot.ts), and DuckDB does not read the payload at all.
 */
export class DuckDbHotLayouts {
  private readonly byDataset = new Map<string, HotLayout[]>();
  private lastId = 0;
  /** The hot columns of `events`, in table order. */
  private hotColumns: string[] = [];
  private readonly rows = new Map<string, DatasetRows>();
  /** Versions are `<this store's open>.<n>`: a version from before a restart never matches one after. */
  private readonly opened = randomUUID().slice(0, 8);
  private versions = 0;

  private constructor(private readonly connection: DuckDBConnection) {}

  static async open(connection: DuckDBConnection): Promise<DuckDbHotLayouts> {
    const layouts = new DuckDbHotLayouts(connection);
    const rows = (await connection.runAndReadAll('SELECT id, dataset_id, slots FROM event_hot_layouts ORDER BY id')).getRows();
    for (const [id, datasetId, slots] of rows) layouts.add({ id: Number(id), datasetId: datasetId as string, slots: JSON.parse(slots as string) as HotSlot[] });
    await layouts.readColumns();
    if (layouts.byDataset.size) await layouts.count([...layouts.byDataset.keys()]);
    return layouts;
  }

  private async readColumns(): Promise<void> {
    const rows = (
      await this.connection.runAndReadAll("SELECT column_name FROM duckdb_columns() WHERE table_name = 'events' AND schema_name = 'main' ORDER BY column_index")
    ).getRows();
    this.hotColumns = rows.map((r) => r[0] as string).filter(isHotColumn);
  }

  private add(layout: HotLayout): void {
    const list = this.byDataset.get(layout.datasetId) ?? [];
    list.push(layout);
    this.byDataset.set(layout.datasetId, list);
    this.lastId = Math.max(this.lastId, layout.id);
  }

  /** The hot columns of `events`, in table order (every chunk writes them all). */
  get columns(): readonly string[] {
    return this.hotColumns;
  }

  /** The layout new rows of the dataset are loaded with (undefined: no hot keys). */
  current(datasetId: string): HotLayout | undefined {
    const list = this.byDataset.get(datasetId);
    const last = list?.[list.length - 1];
    return last?.slots.length ? last : undefined;
  }

  /**
   * Every layout of these datasets (rows of any of them may be in a read), with what their
   * stored rows need (`rows`, `version`), and a layout 0 without slots for a dataset's rows
   * loaded without hot keys.
   */
  of(datasetIds: readonly string[]): HotLayout[] {
    return datasetIds.flatMap((id) => withStoredRows(id, this.byDataset.get(id) ?? [], this.rows.get(id)));
  }

  /**
   * Makes `keys` the dataset's hot keys for rows loaded from now on (no-op when they are). Call
   * only between loads.
   */
  async set(datasetId: string, keys: readonly HotKey[]): Promise<void> {
    const slots = nextSlots(this.current(datasetId)?.slots ?? [], keys);
    if (!slots) return;
    // A dataset's first layout: which rows it has so far (all without hot keys).
    if (!this.rows.has(datasetId)) await this.count([datasetId]);
    const missing = hotColumnsOf(slots).filter((c) => !this.hotColumns.includes(c));
    // Adding a column of NULLs is a change to the catalog only; each commits alone.
    for (const name of missing) await this.connection.run(`ALTER TABLE events ADD COLUMN IF NOT EXISTS ${name} ${hotColumnType(name)}`);
    if (missing.length) await this.readColumns();
    const layout: HotLayout = { id: this.lastId + 1, datasetId, slots };
    await this.connection.run('INSERT INTO event_hot_layouts VALUES (?, ?, ?)', [layout.id, datasetId, JSON.stringify(slots)]);
    this.add(layout);
  }

  /**
   * Rows of the dataset about to be loaded with this layout (0: none), their hot_json bits OR-ed
   * and their odd number columns (EventChunkBuilder.hotRows). Call before the load commits, so
   * the version changes before a read can see the rows.
   */
  noteRows(datasetId: string, layout: number, json: number, oddNumbers: number): void {
    const known = this.rows.get(datasetId);
    if (!known) return; // no layout ever: no read takes a column, nothing to know
    const had = known.byLayout.get(layout);
    const next = { json: ((had?.json ?? 0) | json) >>> 0, oddNumbers: ((had?.oddNumbers ?? 0) | oddNumbers) >>> 0 };
    if (had && had.json === next.json && had.oddNumbers === next.oddNumbers) return;
    known.byLayout.set(layout, next);
    known.version = this.nextVersion();
  }

  /**
   * Whether, by the counts, some stored row of the dataset carries another layout than its
   * current one (rows loaded before a key was hot, or under older keys): what the backfill fills.
   */
  rowsOutsideCurrent(datasetId: string): boolean {
    const current = this.current(datasetId);
    const known = this.rows.get(datasetId);
    if (!current || !known) return false;
    return [...known.byLayout.keys()].some((id) => id !== current.id);
  }

  /** Whether the store keeps the dataset's rows per layout (it has had hot keys). */
  tracks(datasetId: string): boolean {
    return this.rows.has(datasetId);
  }

  /**
   * Counts the datasets' rows per layout from the table again (after a delete: what is gone no
   * longer counts). Call between loads, so that no load is noted and not yet committed.
   */
  recount(datasetId: string): Promise<void> {
    return this.count([datasetId]);
  }

  private nextVersion(): string {
    return `${this.opened}.${++this.versions}`;
  }

  private async count(datasetIds: readonly string[]): Promise<void> {
    const counted = await countHotRows(this.connection, this.hotColumns, datasetIds);
    for (const [id, byLayout] of counted) {
      const known = this.rows.get(id);
      // Fewer rows need no new version: a read that relied on more saw no row that needs the JSON.
      const grew =
        !known ||
        [...byLayout].some(([layout, r]) => {
          const had = known.byLayout.get(layout);
          return !had || (had.json | r.json) >>> 0 !== had.json || (had.oddNumbers | r.oddNumbers) >>> 0 !== had.oddNumbers;
        });
      this.rows.set(id, { version: grew ? this.nextVersion() : known.version, byLayout });
    }
  }
}

/**
 * A dataset's layouts as hotLayouts answers them: those with slots, each with what its stored
 * rows need (`rows`, absent: none stored) and the version of the dataset's counts, and a layout
 * 0 without slots for its rows loaded without hot keys. Without `known` (no counts), the
 * layouts alone: every read keeps the JSON.
 */
export function withStoredRows(datasetId: string, layouts: readonly HotLayout[], known: DatasetRows | undefined): HotLayout[] {
  const answer: HotLayout[] = layouts
    .filter((l) => l.slots.length > 0)
    .map((l) => {
      const rows = known?.byLayout.get(l.id);
      return { ...l, ...(rows ? { rows: { ...rows } } : {}), ...(known ? { version: known.version } : {}) };
    });
  // Rows of no layout with slots (0), or of one not known here (never expected): no key is in
  // their columns, so a key they may hold reads the JSON.
  for (const [id, rows] of known?.byLayout ?? []) {
    if (!answer.some((l) => l.id === id)) answer.unshift({ id, datasetId, slots: [], rows: { ...rows }, version: known!.version });
  }
  return answer;
}

/**
 * Counts, from the table, the datasets' rows per layout (0: none) with the OR of their hot_json
 * and their odd number columns (what EventChunkBuilder.hotRows notes at load). `hotColumns`: the
 * hot columns `events` has. Every dataset asked is in the answer (no rows: an empty map).
 */
export async function countHotRows(connection: DuckDBConnection, hotColumns: readonly string[], datasetIds: readonly string[]): Promise<Map<string, Map<number, LayoutRows>>> {
  const counted = new Map<string, Map<number, LayoutRows>>(datasetIds.map((id) => [id, new Map()]));
  if (!datasetIds.length) return counted;
  const list = datasetIds.map(() => '?').join(', ');
  if (!hotColumns.includes('hot_layout')) {
    // No hot columns yet: every row was loaded without hot keys.
    const rows = (await connection.runAndReadAll(`SELECT DISTINCT dataset_id FROM events WHERE dataset_id IN (${list})`, [...datasetIds])).getRows();
    for (const [id] of rows) counted.get(id as string)?.set(0, { json: 0, oddNumbers: 0 });
    return counted;
  }
  const odd = hotColumns
    .filter((c) => c.startsWith('hot_n'))
    .map((c) => `(CASE WHEN ${c} IS NOT NULL AND NOT (${c} = trunc(${c}) AND abs(${c}) < 1e15) THEN ${2 ** Number(c.slice(5))} ELSE 0 END)`);
  const sql =
    `SELECT dataset_id, coalesce(hot_layout, 0), bit_or(coalesce(hot_json, 0)), bit_or(CAST(${odd.length ? odd.join(' | ') : '0'} AS UBIGINT)) ` +
    `FROM events WHERE dataset_id IN (${list}) GROUP BY ALL`;
  const rows = (await connection.runAndReadAll(sql, [...datasetIds] as DuckDBValue[])).getRows();
  for (const [id, layout, json, oddNumbers] of rows) counted.get(id as string)?.set(Number(layout), { json: Number(json) >>> 0, oddNumbers: Number(oddNumbers) >>> 0 });
  return counted;
}
