import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import type { Tenant } from '../../tenancy/tenant.js';
import type { StoredEvent } from '../../shared/event-record.js';
import type { AggregateRequest, FieldStats, FieldStatsRequest, RawGroupRow, RawStatsRow, ReadLane, StatsRequest, TailRequest } from '../event-store.js';
import { EventStoreLockedError, statsSelect } from '../event-store.js';
import type { EnginePageRequest, EventEngine, LoadRecord } from '../engine.js';
import { DuckDbLoader } from './duckdb-loader.js';
import { eventColumns, schemaSql, sqlString, TenantIds, tenantWhere, toStoredEvent } from './duckdb-sql.js';
import { isUuid } from '../../shared/ids.js';
import { discoverFields, fieldStatsLimits, sampleRange } from '../field-stats.js';
import { ReadGate } from './read-gate.js';
import { MonitorLane } from './read-lane.js';
import { ThreadSwitch } from './thread-switch.js';
import { DuckDbHotLayouts } from './duckdb-hot-layouts.js';
import { DuckDbHotBackfill } from './duckdb-hot-backfill.js';
import type { HotKey, HotLayout } from '../hot-columns.js';

const noNames: ReadonlyMap<string, string> = new Map();

export interface DuckDbTablesOptions {
  /** Directory holding events.duckdb (OPS_DATA_DIR/events). */
  dir: string;
  /** DuckDB memory_limit (default 192MB, to keep the process well under 400 MB). */
  memoryLimit?: string;
  threads?: number;
}

/** DuckDB's memory_limit for the event store unless DuckDbTablesOptions.memoryLimit says otherwise. */
const defaultMemoryLimit = '192MB';
/** DuckDB's threads unless DuckDbTablesOptions.threads says otherwise (OPS_EVENTS_THREADS). */
const defaultThreads = 2;

/** The DuckDB settings of the event store (bench/ uses them for its same-run baselines). */
export function eventStoreSettings(tempDirectory: string, options: { memoryLimit?: string; threads?: number } = {}): Record<string, string> {
  return {
    memory_limit: options.memoryLimit ?? defaultMemoryLimit,
    threads: String(options.threads ?? defaultThreads),
    // Hash aggregates and sorts spill here past memory_limit; the cap keeps one big query from
    // filling the disk the events live on (past it the query fails like one out of memory:
    // ReadGate, a 400 for /query). The default is 90% of the free disk.
    temp_directory: tempDirectory,
    max_temp_directory_size: '2GB',
    // seq carries the order; without preserving it DuckDB inserts in parallel with less memory.
    preserve_insertion_order: 'false',
    // Each checkpoint re-compresses the open row group and stalls the committing writer for
    // ~0.1–0.5 s; committed rows wait uncompressed in memory until one. The loader checkpoints
    // when a row group (122,880 rows) fills (duckdb-loader.ts): 18 MB of WAL for bench:ingest's
    // standard events, 26 MB for the shipper routes' (121-byte payloads). This bound is for
    // longer rows: at 16MB it came first, every 76k–107k rows, so each row was compressed
    // ~1.6–1.8 times. (64MB as the only rule: peak RSS 390–440 MB against the goal < 400.)
    wal_autocheckpoint: '32MB',
  };
}

/**
 * The embedded DuckDB engine: one `events.duckdb` file, owned by one thread of one process
 * (DuckDB allows one writing process). It runs in the events worker thread (duckdb-worker.ts),
 * so no statement ever blocks the event loop that serves HTTP.
 */
export class DuckDbEngine implements EventEngine {
  private closed = false;
  /** The last queued deleteBefore; see there. */
  private deletes: Promise<unknown> = Promise.resolve();
  /** Retries a read that ran out of memory beside others with the engine to itself. */
  private readonly gate = new ReadGate();
  /** The monitor evaluations' reads: one at a time on a connection of their own, after the API's (read-lane.ts). */
  private readonly monitors: MonitorLane;
  /** DuckDB's threads: one for the lane's statements and the loader's loads, all for the API's reads (thread-switch.ts). */
  private readonly threads: ThreadSwitch | undefined;
  /** The connection that switches DuckDB's threads, opened with the first switch. */
  private threadsConnection: Promise<DuckDBConnection> | undefined;
  /** Fills the hot columns of rows stored before their dataset's current hot keys (duckdb-hot-backfill.ts). */
  private readonly backfill: DuckDbHotBackfill;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly loaderConnection: DuckDBConnection,
    private readonly loader: DuckDbLoader,
    private readonly tenants: TenantIds,
    private readonly hot: DuckDbHotLayouts,
    private readonly memoryLimit: string,
    threads: number,
  ) {
    const switchThreads = async (n: number) => {
      await (await (this.threadsConnection ??= instance.connect())).run(`SET threads = ${n}`);
    };
    this.threads = threads > 1 ? new ThreadSwitch(switchThreads, threads) : undefined;
    this.monitors = new MonitorLane(() => instance.connect(), undefined, { threads: this.threads });
    // On the loader's connection between loads, with the background's thread count, as a load.
    this.backfill = new DuckDbHotBackfill(
      loaderConnection,
      hot,
      (work) =>
        this.betweenLoads(() => {
          if (this.closed) return Promise.reject(new Error('event store closed'));
          return this.threads ? this.threads.background(work) : work();
        }),
      () => loader.checkpointNow(),
    );
  }

  /** The value of `tenantWhere` for this tenant: tenancy is applied here and nowhere else. */
  private tenantParams(tenant: Tenant): DuckDBValue[] {
    return this.tenants.params(tenant);
  }

  static async open(options: DuckDbTablesOptions): Promise<DuckDbEngine> {
    fs.mkdirSync(options.dir, { recursive: true });
    // Left by earlier versions, which staged each commit as an NDJSON file.
    fs.rmSync(path.join(options.dir, 'staging'), { recursive: true, force: true });
    const file = path.join(options.dir, 'events.duckdb');
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(file, eventStoreSettings(path.join(options.dir, 'tmp'), options));
    } catch (error) {
      if (/lock/i.test((error as Error).message)) throw new EventStoreLockedError(file, error);
      throw error;
    }
    const connection = await instance.connect();
    await connection.run(schemaSql);
    const tenants = new TenantIds();
    tenants.load((await connection.runAndReadAll('SELECT id, org_id, project_id, mode FROM event_tenants')).getRows());
    const hot = await DuckDbHotLayouts.open(connection);
    // The loader calls the engine after its checkpoints; the engine is made with the loader.
    const engine: DuckDbEngine = new DuckDbEngine(
      instance,
      connection,
      new DuckDbLoader(connection, tenants, hot, (c) => engine.releaseWrittenBlocks(c)),
      tenants,
      hot,
      options.memoryLimit ?? defaultMemoryLimit,
      options.threads ?? defaultThreads,
    );
    return engine;
  }

  /**
   * Drops the blocks the loader's checkpoint just wrote from DuckDB's buffer pool (they are in
   * the file and the OS's page cache): DuckDB keeps every block it writes in the pool until
   * memory_limit forces it out, so under ingest alone the pool grows with the events loaded,
   * toward memory_limit — most of the server's RSS growth under bench:ingest. Lowering
   * memory_limit for a moment evicts them (DuckDB's SetLimit); the target keeps everything that
   * is not a persisted block of a table, so nothing else has to be spilled. Only when no read
   * runs (ReadGate.whenIdle: a read's allocation in that moment could fail against the lowered
   * limit), else at the next checkpoint.
   */
  async releaseWrittenBlocks(connection: DuckDBConnection): Promise<void> {
    await this.gate.whenIdle(async () => {
      const reader = await connection.runAndReadAll("SELECT coalesce(sum(memory_usage_bytes) FILTER (WHERE tag <> 'BASE_TABLE'), 0), coalesce(sum(memory_usage_bytes) FILTER (WHERE tag = 'BASE_TABLE'), 0) FROM duckdb_memory()");
      const [others, blocks] = reader.getRows()[0]!.map(Number) as [number, number];
      if (blocks < 8 * 1024 * 1024) return;
      const targetMiB = Math.ceil(others / (1024 * 1024)) + 8;
      try {
        await connection.run(`SET memory_limit = '${targetMiB}MiB'`);
      } catch {
        // Not all of it could be freed (pinned by a statement): what could was.
      } finally {
        await connection.run(`SET memory_limit = '${this.memoryLimit}'`);
      }
    });
  }

  loadedSeq(): Promise<number> {
    return this.loader.loadedSeq();
  }

  load(records: readonly LoadRecord[], lastSeq: number): Promise<void> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    const load = () => this.loader.load(records, lastSeq);
    return this.betweenLoads(() => (this.threads ? this.threads.background(load) : load()));
  }

  loadRoom(): number {
    return this.loader.room();
  }

  /** The loader's connection, one use at a time: loads and hot-key changes (which ALTER events). */
  private loaderQueue: Promise<unknown> = Promise.resolve();
  private betweenLoads<T>(run: () => Promise<T>): Promise<T> {
    const next = this.loaderQueue.then(run);
    this.loaderQueue = next.catch(() => undefined);
    return next;
  }

  async existingIds(tenant: Tenant, eventIds: readonly string[]): Promise<string[]> {
    if (this.tenants.get(tenant) === undefined) return [];
    const found: string[] = [];
    for (let i = 0; i < eventIds.length; i += 1000) {
      const list = eventIds.slice(i, i + 1000).filter(isUuid).map((e) => `${sqlString(e)}::UUID`).join(',');
      const rows = await this.read(`SELECT event_id::VARCHAR FROM events WHERE ${tenantWhere} AND event_id IN (${list})`, this.tenantParams(tenant));
      for (const row of rows) found.push(row[0] as string);
    }
    return found;
  }

  /**
   * Runs one read on its own connection, so reads run in parallel with the loader. A read that
   * runs out of memory fails alone with EventStoreResourceError (ReadGate). The monitors' lane
   * runs its reads one at a time on its connection, each after the API reads in flight (read-lane.ts).
   */
  private read(sql: string, params: DuckDBValue[], lane: ReadLane = 'api'): Promise<DuckDBValue[][]> {
    if (lane === 'monitors') return this.monitors.run((connection) => this.gate.run(() => this.readOn(connection, sql, params)));
    return this.monitors.api(() => this.gate.run(() => this.readOnce(sql, params)));
  }

  private async readOnce(sql: string, params: DuckDBValue[]): Promise<DuckDBValue[][]> {
    if (this.closed) throw new Error('event store closed');
    const connection = await this.instance.connect();
    try {
      return await this.readOn(connection, sql, params);
    } finally {
      connection.closeSync();
    }
  }

  private async readOn(connection: DuckDBConnection, sql: string, params: DuckDBValue[]): Promise<DuckDBValue[][]> {
    if (this.closed) throw new Error('event store closed');
    const reader = await connection.runAndReadAll(sql, params);
    return reader.getRows();
  }

  async query(tenant: Tenant, request: EnginePageRequest): Promise<{ events: StoredEvent[]; more: boolean }> {
    const params: DuckDBValue[] = [...this.tenantParams(tenant), ...request.filter.params];
    let keyset = '';
    if (request.after) {
      keyset = ' AND (ts < ? OR (ts = ? AND event_id < ?::UUID))';
      params.push(request.after.ts, request.after.ts, request.after.event_id);
    }
    const rows = await this.read(
      `SELECT ${eventColumns} FROM events WHERE ${tenantWhere} AND (${request.filter.where})${keyset} ` +
        `ORDER BY ts DESC, event_id DESC LIMIT ${Math.trunc(request.limit) + 1}`,
      params,
      request.lane,
    );
    return { events: rows.slice(0, request.limit).map((r) => toStoredEvent(r, noNames)), more: rows.length > request.limit };
  }

  async aggregate(tenant: Tenant, request: AggregateRequest): Promise<RawGroupRow[]> {
    // The key's `?` come first in the text (SELECT list); GROUP BY 1 avoids repeating them.
    const rows = await this.read(
      `SELECT ${request.key.sql} AS value, count(*) AS n FROM events WHERE ${tenantWhere} AND (${request.filter.where}) ` +
        `GROUP BY 1 ORDER BY n DESC, value ASC NULLS LAST LIMIT ${Math.trunc(request.limit)}`,
      [...request.key.params, ...this.tenantParams(tenant), ...request.filter.params],
      request.lane,
    );
    return rows.map((r) => {
      const raw = r[0];
      const key = raw === null || raw === undefined ? null : typeof raw === 'bigint' ? Number(raw) : (raw as string | number | boolean);
      return { key, count: Number(r[1]) };
    });
  }

  async stats(tenant: Tenant, request: StatsRequest): Promise<RawStatsRow[]> {
    const { select, groupBy, params } = statsSelect(request);
    const rows = await this.read(
      `SELECT ${select} FROM events WHERE ${tenantWhere} AND (${request.filter.where})${groupBy} ` +
        `ORDER BY ${request.orderBy} LIMIT ${Math.trunc(request.limit)}`,
      [...params, ...this.tenantParams(tenant), ...request.filter.params],
      request.lane,
    );
    const width = request.keys.length;
    const plain = (raw: DuckDBValue): string | number | boolean | null =>
      raw === null || raw === undefined ? null : typeof raw === 'bigint' ? Number(raw) : (raw as string | number | boolean);
    return rows.map((r) => ({
      keys: r.slice(0, width).map(plain),
      values: r.slice(width).map((v) => (v === null || v === undefined ? null : Number(v))),
    }));
  }

  async rollupCounts(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Array<[string, number]>> {
    if (!datasetIds.length) return [];
    const rows = await this.read(
      `SELECT dataset_id, sum(count) FROM events_rollup WHERE ${tenantWhere} AND minute >= ? ` +
        `AND dataset_id IN (${datasetIds.map(() => '?').join(', ')}) GROUP BY dataset_id`,
      [...this.tenantParams(tenant), Math.floor(sinceMs / 60_000), ...datasetIds],
    );
    return rows.map(([id, n]) => [id as string, Number(n)]);
  }

  /**
   * Discovery over a bounded sample (fieldStatsLimits): the newest events of the window, at
   * most 2,000 and 2 MB of payload text, read in three small statements (their seqs, then
   * their sizes, then the payloads that fit), and walked in discoverFields.
   */
  async fieldStats(tenant: Tenant, request: FieldStatsRequest): Promise<FieldStats> {
    const where = `${tenantWhere} AND dataset_id = ? AND ts >= ?`;
    const params: DuckDBValue[] = [...this.tenantParams(tenant), request.datasetId, request.sinceMs];
    const limit = fieldStatsLimits.sampleEvents;
    const newest = await this.read(`SELECT seq FROM events WHERE ${where} ORDER BY seq DESC LIMIT ${limit}`, params);
    const oldest = newest[newest.length - 1]?.[0];
    if (oldest === undefined) return { fields: [], sampledEvents: 0, truncated: false };
    const sizes = await this.read(
      `SELECT seq, strlen(payload) FROM events WHERE ${where} AND seq >= ? ORDER BY seq DESC LIMIT ${limit}`,
      [...params, oldest],
    );
    const { from, to } = sampleRange(sizes.map(([seq, size]) => [seq!, Number(size)] as const)) ?? { from: oldest, to: oldest };
    // Between the seqs measured: events appended meanwhile are not in the byte count.
    const rows = await this.read(`SELECT payload FROM events WHERE ${where} AND seq BETWEEN ? AND ? ORDER BY seq DESC`, [...params, from, to]);
    const { fields, truncated, frequent } = discoverFields(
      rows.map((r) => r[0] as string),
      request.maxKeys,
      request.maxSamples,
    );
    return { fields, sampledEvents: rows.length, truncated, frequent };
  }

  /**
   * One delete at a time: two purges (the background job and `opsctl purge`) deleting the same
   * rows at once make DuckDB refuse the second ("Conflict on tuple deletion"); queued, the
   * second finds nothing left to delete. A conflict with the loader's rollup merge is retried.
   */
  deleteBefore(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number> {
    const run = this.deletes.then(async () => {
      const deleted = await this.deleteBeforeNow(tenant, datasetId, beforeMs);
      // What the dataset's remaining rows need (the rows loaded before a key was hot may be
      // gone): counted again between loads. On failure the old count stays, which only means
      // more reads of the JSON than needed.
      if (deleted > 0 && this.hot.tracks(datasetId)) await this.betweenLoads(() => this.hot.recount(datasetId)).catch(() => undefined);
      return deleted;
    });
    this.deletes = run.catch(() => undefined);
    return run;
  }

  private async deleteBeforeNow(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number> {
    if (this.closed) throw new Error('event store closed');
    // Its own connection: DuckDB's MVCC lets the delete run beside the loader's appends.
    const connection = await this.instance.connect();
    try {
      const params: DuckDBValue[] = [...this.tenantParams(tenant), datasetId];
      for (let attempt = 1; ; attempt++) {
        try {
          await connection.run('BEGIN TRANSACTION');
          const result = await connection.run(`DELETE FROM events WHERE ${tenantWhere} AND dataset_id = ? AND ts < ?`, [...params, beforeMs]);
          await connection.run(`DELETE FROM events_rollup WHERE ${tenantWhere} AND dataset_id = ? AND minute < ?`, [
            ...params,
            Math.floor(beforeMs / 60_000),
          ]);
          await connection.run('COMMIT');
          return result.rowsChanged;
        } catch (error) {
          await connection.run('ROLLBACK').catch(() => undefined);
          if (attempt >= 5 || !/conflict/i.test((error as Error).message)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
        }
      }
    } finally {
      connection.closeSync();
    }
  }

  /** One log loads here: the store knows its end (LoggedEventStore.tailStart). */
  async logPositions(): Promise<Record<string, number>> {
    return {};
  }

  /** One log loads here: the store knows its loaded position (LoggedEventStore.loadedPositions). */
  async loadedPositions(): Promise<Record<string, number>> {
    return {};
  }

  async readAfter(tenant: Tenant, request: TailRequest): Promise<StoredEvent[]> {
    const rows = await this.read(
      `SELECT ${eventColumns} FROM events WHERE ${tenantWhere} AND seq > ? AND (${request.filter.where}) ORDER BY seq LIMIT ${Math.trunc(request.limit)}`,
      // One log here: a position names it '' (a position from elsewhere without it reads from the start).
      [...this.tenantParams(tenant), request.after.logs[''] ?? 0, ...request.filter.params],
    );
    return rows.map((r) => toStoredEvent(r, noNames));
  }

  /**
   * The dataset's hot payload keys for rows loaded from now on (hot-columns.ts). The tenant is
   * the caller's, checked by the caller's metadata: dataset ids are unique across tenants.
   */
  async setHotKeys(_tenant: Tenant, datasetId: string, keys: readonly HotKey[]): Promise<void> {
    if (this.closed) throw new Error('event store closed');
    await this.betweenLoads(() => this.hot.set(datasetId, keys));
  }

  /**
   * Starts filling the hot columns of the dataset's rows stored before its current hot keys, in
   * the background (duckdb-hot-backfill.ts); true while the counts still show such rows.
   */
  async backfillHotKeys(_tenant: Tenant, datasetId: string): Promise<boolean> {
    if (this.closed) throw new Error('event store closed');
    return this.backfill.request(datasetId);
  }

  /** Every hot-key layout rows of these datasets may carry (the compilers read the columns through them). */
  async hotLayouts(_tenant: Tenant, datasetIds: readonly string[]): Promise<HotLayout[]> {
    return this.hot.of(datasetIds);
  }

  /** Rows in each of the events table's row groups, in order (tests and benches). */
  async rowGroups(): Promise<number[]> {
    const rows = await this.read("SELECT sum(count) FROM pragma_storage_info('events') WHERE column_name = 'seq' AND segment_type <> 'VALIDITY' GROUP BY row_group_id ORDER BY row_group_id", []);
    return rows.map(([count]) => Number(count));
  }

  /** DuckDB's buffer pool by what holds it (`duckdb_memory()`), in bytes: tests and benches. */
  async bufferPool(): Promise<Map<string, number>> {
    const rows = await this.read('SELECT tag, memory_usage_bytes FROM duckdb_memory()', []);
    return new Map(rows.map(([tag, bytes]) => [String(tag), Number(bytes)]));
  }

  async ping(): Promise<void> {
    await this.read('SELECT 1', []);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.backfill.close();
    await this.deletes;
    await this.monitors.close();
    (await this.threadsConnection)?.closeSync();
    this.loaderConnection.closeSync();
    this.instance.closeSync();
  }
}
