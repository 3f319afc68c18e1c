import type { DuckDBConnection } from '@duckdb/node-api';
import { nextSlots, type HotKey, type HotLayout, type HotSlot } from './hot-columns.js';

/**
 * Every hot-key layout of the DuckDB store (hot-columns.ts), kept in `event_hot_layouts` and in
 * memory. The loader asks `current(datasetId)` for each chunk; a change writes the new layout's
 * row (autocommit) before the loader can use it, so a loaded row never names a layout that is
 * not stored. Layout ids grow across the store and are never reused.
 */
export class DuckDbHotLayouts {
  private readonly byDataset = new Map<string, HotLayout[]>();
  private lastId = 0;
  /** One change at a time: two PATCHes of one dataset must not both take "the next id". */
  private changes: Promise<unknown> = Promise.resolve();

  private constructor(private readonly connection: DuckDBConnection) {}

  static async open(connection: DuckDBConnection): Promise<DuckDbHotLayouts> {
    const layouts = new DuckDbHotLayouts(connection);
    const rows = (await connection.runAndReadAll('SELECT id, dataset_id, slots FROM event_hot_layouts ORDER BY id')).getRows();
    for (const [id, datasetId, slots] of rows) layouts.add({ id: Number(id), datasetId: datasetId as string, slots: JSON.parse(slots as string) as HotSlot[] });
    return layouts;
  }

  private add(layout: HotLayout): void {
    const list = this.byDataset.get(layout.datasetId) ?? [];
    list.push(layout);
    this.byDataset.set(layout.datasetId, list);
    this.lastId = Math.max(this.lastId, layout.id);
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

  /** Makes `keys` the dataset's hot keys for rows loaded from now on (no-op when they are). */
  set(datasetId: string, keys: readonly HotKey[]): Promise<void> {
    const run = this.changes.then(async () => {
      const slots = nextSlots(this.current(datasetId)?.slots ?? [], keys);
      if (!slots) return;
      const layout: HotLayout = { id: this.lastId + 1, datasetId, slots };
      await this.connection.run('INSERT INTO event_hot_layouts VALUES (?, ?, ?)', [layout.id, datasetId, JSON.stringify(slots)]);
      this.add(layout);
    });
    this.changes = run.catch(() => undefined);
    return run;
  }
}
