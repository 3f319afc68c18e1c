import type { DuckDBConnection } from '@duckdb/node-api';
import { HotBackfillChunk } from './duckdb-chunk.js';
import type { DuckDbHotLayouts } from './duckdb-hot-layouts.js';
import { hotColumnsOf, hotColumnType, type HotLayout } from '../hot-columns.js';

export interface HotBackfillOptions {
  /** Rows one step fills at most: one short transaction on the loader's connection. */
  batchRows?: number;
  /** Row ids one step looks through for them (a row group's worth). */
  windowRows?: number;
  /**
   * After each step the backfill rests this many times as long as the step took (at least
   * minPauseMs): the share of the loader's connection and of a core it takes is at most
   * 1 / (1 + pauseFactor).
   */
  pauseFactor?: number;
  minPauseMs?: number;
  /** Rows filled between two checkpoints (and one at the end of each pass). */
  checkpointRows?: number;
}

const defaults: Required<HotBackfillOptions> = { batchRows: 4_096, windowRows: 122_880, pauseFactor: 1, minPauseMs: 10, checkpointRows: 122_880 };

/**
 * Gives the rows a dataset stored before its current hot keys (hot-columns.ts: rows of layout 0,
 * or of older layouts) the current layout's columns, in the background, so that a key made hot
 * later is read from its column over all the dataset's rows, not only the newer ones.
 *
 * In small steps, each one transaction on the loader's connection between two loads (`lane`,
 * which also runs it with DuckDB's background thread count): the rows of a window of row ids
 * that are of the dataset and of another layout (at most batchRows), their payloads read,
 * their values extracted exactly as the loader extracts them (duckdb-chunk.ts, hot-scan.ts),
 * staged in a temporary table and written with one UPDATE joined on rowid and seq. The same
 * transaction reads and writes, so no checkpoint can renumber row ids in between (DuckDB
 * checkpoints only without other transactions), and seq must match as well. Each step notes
 * what its rows add to the dataset's counts before it commits (DuckDbHotLayouts.noteRows, as a
 * load does), so a read relying on the counts sees their version change; the rows of the old
 * layouts stay counted until a recount after the pass (conservative: those reads keep the
 * per-row CASE with the JSON, exact for every row whatever its layout).
 *
 * A checkpoint between steps may move rows to lower row ids (DuckDB merges row groups), so a
 * pass can miss some: after each pass the dataset is counted again, and another pass runs while
 * rows are left and the last one filled any (at most three).
 */
export class DuckDbHotBackfill {
  private readonly wanted = new Set<string>();
  private loop: Promise<void> | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  private readonly options: Required<HotBackfillOptions>;
  /** Rows filled since the store opened (tests and benches). */
  filled = 0;

  constructor(
    private readonly connection: DuckDBConnection,
    private readonly hot: DuckDbHotLayouts,
    /** Runs a step on the loader's connection between loads. */
    private readonly lane: <T>(work: () => Promise<T>) => Promise<T>,
    /** The loader's checkpoint (DuckDbLoader.checkpointNow): whether it was made. */
    private readonly checkpoint: () => Promise<boolean>,
    options: HotBackfillOptions = {},
  ) {
    this.options = { ...defaults, ...options };
  }

  /**
   * Fills the dataset's rows of other layouts than its current one, in the background (a no-op
   * while it is being done). True while the counts still show such rows.
   */
  request(datasetId: string): boolean {
    if (this.closed) return false;
    if (!this.hot.rowsOutsideCurrent(datasetId)) return this.wanted.has(datasetId);
    this.wanted.add(datasetId);
    this.loop ??= this.run().finally(() => {
      this.loop = undefined;
    });
    return true;
  }

  private async run(): Promise<void> {
    for (;;) {
      const datasetId = this.wanted.values().next().value;
      if (datasetId === undefined || this.closed) return;
      try {
        await this.fill(datasetId);
      } catch {
        // A conflict with a retention delete, the store closing: asked again at the next
        // request (the chooser's tick); the rows filled so far are filled.
      }
      this.wanted.delete(datasetId);
    }
  }

  private async fill(datasetId: string): Promise<void> {
    for (let pass = 0; pass < 3 && !this.closed; pass++) {
      let filled = 0;
      const end = await this.lane(async () => Number((await this.connection.runAndReadAll('SELECT coalesce(max(rowid), -1) + 1 FROM events')).getRows()[0]![0]));
      let cursor = 0;
      let sinceCheckpoint = 0;
      while (cursor < end && !this.closed) {
        const layout = this.hot.current(datasetId);
        if (!layout) return;
        const started = performance.now();
        const step = await this.lane(() => this.step(datasetId, layout, cursor, end));
        filled += step.filled;
        sinceCheckpoint += step.filled;
        cursor = step.next;
        if (sinceCheckpoint >= this.options.checkpointRows) sinceCheckpoint = (await this.lane(this.checkpoint)) ? 0 : sinceCheckpoint;
        await this.rest(performance.now() - started);
      }
      if (this.closed) return;
      // Until a checkpoint DuckDB keeps the updated values beside the row groups and every scan
      // of those columns merges them in (the column alone read at about half its speed): one now,
      // tried again a few times while reads hold transactions open.
      for (let attempt = 0; sinceCheckpoint > 0 && attempt < 5 && !this.closed; attempt++) {
        if (await this.lane(this.checkpoint)) break;
        await this.rest(1_000);
      }
      await this.lane(() => this.hot.recount(datasetId));
      if (!this.hot.rowsOutsideCurrent(datasetId) || filled === 0) return;
    }
  }

  /** One transaction: the window's rows of the dataset outside `layout`, filled; where the next step starts. */
  private async step(datasetId: string, layout: HotLayout, cursor: number, end: number): Promise<{ filled: number; next: number }> {
    const c = this.connection;
    const windowEnd = Math.min(end, cursor + this.options.windowRows);
    const batch = this.options.batchRows;
    await c.run('BEGIN TRANSACTION');
    try {
      // Row ids and the layout id are the engine's integers, written into the text so that
      // DuckDB narrows the scan to the window (a bound parameter would be compared as a double).
      const rows = (
        await c.runAndReadAll(
          `SELECT rowid, seq, payload FROM events WHERE rowid >= ${Math.trunc(cursor)} AND rowid < ${Math.trunc(windowEnd)} ` +
            `AND dataset_id = ? AND (hot_layout IS NULL OR hot_layout <> ${Math.trunc(layout.id)}) ORDER BY rowid LIMIT ${batch}`,
          [datasetId],
        )
      ).getRows();
      if (!rows.length) {
        await c.run('COMMIT');
        return { filled: 0, next: windowEnd };
      }
      const columns = hotColumnsOf(layout.slots);
      await c.run(`CREATE OR REPLACE TEMP TABLE hot_backfill (rid BIGINT, seq BIGINT, ${columns.map((n) => `${n} ${hotColumnType(n)}`).join(', ')})`);
      const appender = await c.createAppender('hot_backfill', 'main', 'temp');
      let json = 0;
      let oddNumbers = 0;
      try {
        let chunk = new HotBackfillChunk(layout);
        const flush = () => {
          json = (json | chunk.hotRows.json) >>> 0;
          oddNumbers = (oddNumbers | chunk.hotRows.oddNumbers) >>> 0;
          appender.appendDataChunk(chunk.build());
        };
        for (const [rowid, seq, payload] of rows) {
          if (chunk.full) {
            flush();
            chunk = new HotBackfillChunk(layout);
          }
          chunk.add(Number(rowid), Number(seq), payload as string | null);
        }
        flush();
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
      // Before the rows commit, as a load does: a read relying on the counts sees the version change.
      this.hot.noteRows(datasetId, layout.id, json, oddNumbers);
      await c.run(`UPDATE events SET ${columns.map((n) => `${n} = b.${n}`).join(', ')} FROM hot_backfill b WHERE events.rowid = b.rid AND events.seq = b.seq`);
      await c.run('DROP TABLE hot_backfill');
      await c.run('COMMIT');
      this.filled += rows.length;
      const last = Number(rows[rows.length - 1]![0]);
      return { filled: rows.length, next: rows.length === batch ? last + 1 : windowEnd };
    } catch (error) {
      await c.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  private rest(stepMs: number): Promise<void> {
    const ms = Math.max(this.options.minPauseMs, stepMs * this.options.pauseFactor);
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Stops after the step in flight. */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.loop;
  }
}
