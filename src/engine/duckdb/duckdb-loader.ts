import { DuckDBDataChunk, type DuckDBAppender, type DuckDBConnection, type DuckDBType } from '@duckdb/node-api';
import type { Tenant } from '../../tenancy/tenant.js';
import type { LoadRecord } from '../engine.js';
import { EventChunkBuilder } from './duckdb-chunk.js';
import { BatchReader } from '../wal/event-batch.js';
import type { TenantIds } from './duckdb-sql.js';
import { tenantKey } from '../../tenancy/tenant.js';
import type { DuckDbHotLayouts } from './duckdb-hot-layouts.js';

/** Loads between two merges of the rollup's rows. */
const rollupCompactionEvery = 200;

/** Rows of one DuckDB row group (its default `row_group_size`): the unit a checkpoint compresses. */
export const rowGroupRows = 122_880;

/**
 * The fewest rows a row group is sealed with when the loader chooses. At each checkpoint DuckDB
 * merges runs of adjacent row groups that fit in fewer (2 into 1, 3 into 2, 4 into 3:
 * RowGroupCollection's vacuum), compressing their rows again: groups of 88,000 rows (two loads of
 * 44,000) would be merged 4 into 3 every fourth checkpoint, a long checkpoint that holds the
 * server's peak memory while it runs (docs/events-engine.md, "Row groups sealed nearly full").
 * Four groups of more than 3/4 of a group never fit in three.
 */
export const sealRows = (rowGroupRows * 3) / 4 + 1;

interface RollupRow {
  tenant: number;
  datasetId: string;
  minute: number;
  count: number;
}

/**
 * Moves write-ahead log records into `events` in one transaction per call: rows are written
 * column by column into DuckDB data chunks (one tenant and dataset per chunk) and appended,
 * with the per-minute rollup, new tenants and the loaded position (`event_loader`), then
 * COMMIT. The position commits with the rows, so a crash before COMMIT reloads the records
 * and one after it skips them: each is loaded exactly once.
 */
export class DuckDbLoader {
  private loadsSinceCompaction = 0;
  /**
   * Rows loaded since the last checkpoint, and whether one is owed. A checkpoint seals the row
   * groups it writes (later rows start a new group) and merges small sealed groups into full
   * ones, compressing their rows again. By WAL size alone (wal_autocheckpoint) it came every so
   * many bytes of rows, not at a group's end, so most rows were compressed twice, and the longer
   * the rows the more often. So the loader checkpoints once a row group's worth of rows is loaded
   * (rows of one load are not split: a group ends with a whole load), compressing each row once;
   * wal_autocheckpoint remains the bound for long rows.
   */
  private rowsSinceCheckpoint = 0;
  private checkpointDue = false;
  /** The data chunk loads fill, per column types (`EventChunkBuilder.types`: one array per set of hot columns). */
  private readonly dataChunks = new Map<readonly DuckDBType[], DuckDBDataChunk>();

  constructor(
    private readonly connection: DuckDBConnection,
    private readonly tenants: TenantIds,
    private readonly hot: DuckDbHotLayouts,
    /** After each checkpoint of the loader's (releaseWrittenBlocks). */
    private readonly afterCheckpoint: (connection: DuckDBConnection) => Promise<void> = async () => undefined,
  ) {}

  async loadedSeq(): Promise<number> {
    const reader = await this.connection.runAndReadAll('SELECT coalesce(max(position), 0) FROM event_loader');
    const position = Number(reader.getRows()[0]![0]);
    if (position > 0) return position;
    // A store written before the log existed: its events are loaded up to their highest seq.
    const max = await this.connection.runAndReadAll('SELECT coalesce(max(seq), 0) FROM events');
    return Number(max.getRows()[0]![0]);
  }

  /** Rows that still fit the open row group (engine.ts EventEngine.loadRoom). */
  room(): number {
    return Math.max(0, rowGroupRows - this.rowsSinceCheckpoint);
  }

  async load(records: readonly LoadRecord[], lastSeq: number): Promise<void> {
    // The records' tenants first (a record's header names it): new ones are inserted before the
    // appender takes the connection.
    const batches = records.map(({ body }) => new BatchReader(body));
    const incoming = batches.reduce((n, b) => n + b.count, 0);
    // Rows that would overflow a group already full enough to seal: seal it first, so the group
    // ends here and these rows start the next (the log's loader sized the load by room(); it is
    // bigger when not even its first record fitted).
    if (this.rowsSinceCheckpoint >= sealRows && this.rowsSinceCheckpoint + incoming > rowGroupRows) await this.checkpoint();
    const newTenants = new Map<string, { tenant: Tenant; id: number }>();
    const tenantIds = batches.map(({ tenant }) => {
      const id = this.tenants.get(tenant) ?? newTenants.get(tenantKey(tenant))?.id;
      if (id !== undefined) return id;
      const allocated = this.tenants.allocate();
      newTenants.set(tenantKey(tenant), { tenant, id: allocated });
      return allocated;
    });
    let rows = 0;
    const rollup = new Map<string, RollupRow>();
    await this.connection.run('BEGIN TRANSACTION');
    try {
      for (const { tenant, id } of newTenants.values()) {
        await this.connection.run('INSERT INTO event_tenants VALUES (?, ?, ?, ?)', [id, tenant.orgId, tenant.projectId, tenant.mode]);
      }
      if (batches.some((b) => b.count > 0)) {
        const appender = await this.connection.createAppender('events');
        try {
          rows = this.appendRows(appender, records, batches, tenantIds, rollup);
          appender.flushSync();
        } finally {
          appender.closeSync();
        }
        await this.appendRollup(rollup.values());
      }
      // One call for the three statements (each call is a hop to libuv's pool and back and a
      // statement of DuckDB's own); lastSeq is the log's integer seq.
      await this.connection.run(`DELETE FROM event_loader; INSERT INTO event_loader VALUES (${Math.trunc(lastSeq)}); COMMIT`);
    } catch (error) {
      await this.connection.run('ROLLBACK').catch(() => undefined);
      for (const { id } of newTenants.values()) this.tenants.release(id);
      throw error;
    }
    for (const { tenant, id } of newTenants.values()) this.tenants.confirm(tenant, id);
    this.rowsSinceCheckpoint += rows;
    // A full group is sealed at once; one that is not waits for the load that would overflow it
    // (above). A group overflowed by a load bigger than its room (rows past sealRows' bound
    // missing) is sealed after it: its last rows are a small group of their own.
    if (this.rowsSinceCheckpoint >= rowGroupRows) this.checkpointDue = true;
    if (this.checkpointDue) await this.checkpoint();
    // Best effort: a failed merge leaves the rows unmerged, which readers sum all the same.
    await this.compactRollup().catch(() => undefined);
  }

  /**
   * Writes the records' events into data chunks (one tenant and dataset per chunk) and hands
   * each to the appender as soon as it is complete, so a load holds one chunk builder at a time
   * (~330 KB of typed arrays and its strings' views), not every chunk of up to
   * OPS_EVENTS_LOAD_BATCH events: built all first, they were the worker's largest memory at
   * full loads. Counts the rollup's rows on the way; returns the rows written.
   */
  private appendRows(appender: DuckDBAppender, records: readonly LoadRecord[], batches: readonly BatchReader[], tenantIds: readonly number[], rollup: Map<string, RollupRow>): number {
    let rows = 0;
    let chunk: EventChunkBuilder | undefined;
    let chunkTenant = -1;
    let chunkDataset = '';
    const flush = (c: EventChunkBuilder) => {
      // Before the rows commit: a read relying on the datasets' rows needing no JSON
      // (duckdb-soql-hot.ts) sees their version change if these rows do (a failed load leaves it
      // changed: harmless).
      const r = c.hotRows;
      this.hot.noteRows(r.datasetId, r.layout, r.json, r.oddNumbers);
      // One DuckDB chunk per column layout, reset (validity, strings, constant vectors) and filled
      // again for each append, which copies it: a new chunk per 2,048 rows kept its vectors and
      // strings in C++ memory until the worker's GC ran its finalizer.
      let data = this.dataChunks.get(c.types);
      if (!data) this.dataChunks.set(c.types, (data = DuckDBDataChunk.create([...c.types])));
      data.reset();
      appender.appendDataChunk(c.build(data));
    };
    records.forEach(({ firstSeq }, b) => {
      const batch = batches[b]!;
      const tenantId = tenantIds[b]!;
      let seq = firstSeq;
      let lastMinute = -1;
      let lastEntry: RollupRow | undefined;
      while (batch.next()) {
        const { datasetId, ts } = batch;
        if (!chunk || chunk.full || chunkTenant !== tenantId || chunkDataset !== datasetId) {
          if (chunk) flush(chunk);
          chunkTenant = tenantId;
          chunkDataset = datasetId;
          chunk = new EventChunkBuilder(tenantId, datasetId, this.hot.current(datasetId), this.hot.columns);
        }
        chunk.addEncoded(seq++, batch);
        rows++;
        const minute = Math.floor(ts / 60_000);
        if (minute !== lastMinute || datasetId !== lastEntry?.datasetId) {
          lastMinute = minute;
          const rollupKey = `${tenantId}|${datasetId}|${minute}`;
          lastEntry = rollup.get(rollupKey);
          if (!lastEntry) rollup.set(rollupKey, (lastEntry = { tenant: tenantId, datasetId, minute, count: 0 }));
        }
        lastEntry.count++;
      }
    });
    if (chunk) flush(chunk);
    return rows;
  }

  /**
   * A checkpoint now (the hot keys' backfill after its updates: DuckDB keeps updated values
   * beside their compressed row groups until one, and every scan of the column merges them);
   * whether it was made. One that fails is owed, as the loader's own.
   */
  async checkpointNow(): Promise<boolean> {
    this.checkpointDue = true;
    await this.checkpoint();
    return !this.checkpointDue;
  }

  /**
   * CHECKPOINT fails while another connection has a transaction open (a query): then the next
   * load tries again, and until one succeeds wal_autocheckpoint still bounds the WAL.
   */
  private async checkpoint(): Promise<void> {
    try {
      await this.connection.run('CHECKPOINT');
      this.checkpointDue = false;
      this.rowsSinceCheckpoint = 0;
    } catch {
      // Owed still.
      return;
    }
    await this.afterCheckpoint(this.connection).catch(() => undefined);
  }

  /** The load's per-minute counts, appended (no index to maintain); see compactRollup. */
  private async appendRollup(rows: Iterable<RollupRow>): Promise<void> {
    const appender = await this.connection.createAppender('events_rollup');
    try {
      for (const r of rows) {
        appender.appendUInteger(r.tenant);
        appender.appendVarchar(r.datasetId);
        appender.appendBigInt(BigInt(r.minute));
        appender.appendBigInt(BigInt(r.count));
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    this.loadsSinceCompaction++;
  }

  /**
   * Merges the rollup's rows to one per (tenant, dataset, minute). Runs between loads (so no
   * append interleaves) about every `rollupCompactionEvery` loads; readers sum the rows, so
   * they see the same counts before and after.
   */
  private async compactRollup(): Promise<void> {
    if (this.loadsSinceCompaction < rollupCompactionEvery) return;
    this.loadsSinceCompaction = 0;
    await this.connection.run('BEGIN TRANSACTION');
    try {
      await this.connection.run(
        'CREATE OR REPLACE TEMP TABLE rollup_merged AS SELECT tenant, dataset_id, minute, sum(count)::BIGINT AS count FROM events_rollup GROUP BY ALL',
      );
      await this.connection.run('DELETE FROM events_rollup');
      await this.connection.run('INSERT INTO events_rollup SELECT * FROM rollup_merged');
      await this.connection.run('DROP TABLE rollup_merged');
      await this.connection.run('COMMIT');
    } catch (error) {
      await this.connection.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
