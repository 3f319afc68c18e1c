import type { DuckDBConnection } from '@duckdb/node-api';
import { hotColumnsOf, hotColumnType, isHotColumn, nextSlots, type HotKey, type HotLayout, type HotSlot } from '../hot-columns.js';

/**
 * Every hot-key layout of the DuckDB store (hot-columns.ts), kept in `event_hot_layouts` and in
 * memory, and the hot columns `events` has. The loader asks `current(datasetId)` and `columns`
 * for each chunk. `set` runs on the loader's connection between two loads (the engine
 * serialises them): it adds the columns a new layout needs (ALTER TABLE, which an open append
 * would conflict with) and stores the layout, both committed before any row names it. Layout
 * ids grow across the store and are never reused.
 */
export class DuckDbHotLayouts {
  private readonly byDataset = new Map<string, HotLayout[]>();
  private lastId = 0;
  /** The hot columns of `events`, in table order. */
  private hotColumns: string[] = [];

  private constructor(private readonly connection: DuckDBConnection) {}

  static async open(connection: DuckDBConnection): Promise<DuckDbHotLayouts> {
    const layouts = new DuckDbHotLayouts(connection);
    const rows = (await connection.runAndReadAll('SELECT id, dataset_id, slots FROM event_hot_layouts ORDER BY id')).getRows();
    for (const [id, datasetId, slots] of rows) layouts.add({ id: Number(id), datasetId: datasetId as string, slots: JSON.parse(slots as string) as HotSlot[] });
    await layouts.readColumns();
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

  /** Every layout of these datasets: rows of any of them may be in a read. */
  of(datasetIds: readonly string[]): HotLayout[] {
    return datasetIds.flatMap((id) => this.byDataset.get(id) ?? []).filter((l) => l.slots.length > 0);
  }

  /**
   * Makes `keys` the dataset's hot keys for rows loaded from now on (no-op when they are). Call
   * only between loads.
   */
  async set(datasetId: string, keys: readonly HotKey[]): Promise<void> {
    const slots = nextSlots(this.current(datasetId)?.slots ?? [], keys);
    if (!slots) return;
    const missing = hotColumnsOf(slots).filter((c) => !this.hotColumns.includes(c));
    // Adding a column of NULLs is a change to the catalog only; each commits alone.
    for (const name of missing) await this.connection.run(`ALTER TABLE events ADD COLUMN IF NOT EXISTS ${name} ${hotColumnType(name)}`);
    if (missing.length) await this.readColumns();
    const layout: HotLayout = { id: this.lastId + 1, datasetId, slots };
    await this.connection.run('INSERT INTO event_hot_layouts VALUES (?, ?, ?)', [layout.id, datasetId, JSON.stringify(slots)]);
    this.add(layout);
  }
}
