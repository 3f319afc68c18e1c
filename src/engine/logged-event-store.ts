import { ChangeBoardWriter, changeBoardFile } from './change-board.js';
import { NamedPages } from './named-pages.js';
import { UnchangedAnswers, keyableParams } from './unchanged-answers.js';
import path from 'node:path';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import type { StoredEvent } from '../shared/event-record.js';
import type { HotKey, HotLayout } from './hot-columns.js';
import { BatchReader, encodeBatch } from './wal/event-batch.js';
import {
  nameDatasets,
  EventStoreBehindError,
  matchAll,
  type ActiveDataset,
  type AggregateRequest,
  type AppendResult,
  type DatasetNameResolver,
  type EventPage,
  type EventPageRequest,
  type EventStore,
  type FieldStats,
  type FieldStatsRequest,
  type NewEvent,
  type RawGroupRow,
  type RawStatsRow,
  type SoqlAnswer,
  type SoqlRequest,
  type StatsRequest,
  type SqlDialect,
  type TailRequest,
} from './event-store.js';
import { readSoql } from './soql-read.js';
import { EngineClient } from './engine-client.js';
import { RecentEvents } from './wal/recent-events.js';
import { WriteAheadLog } from './wal/wal.js';
import { singleLog, singleSeq, type TailPosition } from './tail-position.js';
import { lastSeqOf, type TailRecord } from './tail-record.js';
import { readOrCreateLogId } from './wal/log-id.js';

/** How far behind another host's clock may be without a tail session started now missing its events. */
const tailClockSlackMs = 60_000;

/**
 * ClickHouse, live tail's records (onTailRecord): records durable and not loaded yet are held
 * until loaded (at most this many; past it the oldest are forgotten), and their bodies up to
 * this many bytes (past it the oldest go out without one: a loader seconds behind at full
 * ingest). Forgetting is always safe: a reader that misses a record, or gets one without its
 * events, reads the store.
 */
const maxTailPendingRecords = 10_000;
const maxTailPendingBytes = 16 * 1024 * 1024;
/** Tenants whose last record `prev` remembers; past it the chains start over from the log's position. */
const maxTailChains = 100_000;

/** Told of each record of this process's log: when durable (`loaded` false), then once ClickHouse holds it. */
export type TailRecordListener = (record: TailRecord, loaded: boolean) => void;


export interface LoggedEventStoreOptions {
  /** OPS_DATA_DIR/events: events.duckdb and the log's segments (wal/). */
  dir: string;
  /** clickhouse://…: events live in ClickHouse (the log stays in `dir`). */
  clickhouseUrl?: string;
  names: DatasetNameResolver;
  now: () => number;
  memoryLimit?: string;
  threads?: number;
  log?: (level: 'warn' | 'error', message: string, error?: unknown) => void;
  /** How long a read waits for the loader to reach the events acknowledged before it (→ 503). */
  readWaitMs?: number;
  segmentBytes?: number;
  /** Events held for live tail (recent-events.ts). */
  recentEvents?: number;
  /** Acknowledged events not loaded yet past which appends wait for the loader. */
  maxBacklogEvents?: number;
  /** A load starts at most this often unless someone waits for it (wal-loader.ts, OPS_EVENTS_LOAD_INTERVAL_MS). */
  loadIntervalMs?: number;
  /** OPS_HOT_KEYS_INTERVAL_MS (engine-worker.ts EngineWorkerData.hotKeysIntervalMs). */
  hotKeysIntervalMs?: number;
}

type Tuning = { [K in keyof typeof logDefaults]: number };

type EngineLog = NonNullable<LoggedEventStoreOptions['log']>;

/** Rollup answers kept (rollupRows); a full cache starts over. */
const maxRollups = 10_000;
/** Pages of events kept (pageRows), up to ~100 KB each; a full cache starts over. */
const maxPages = 200;

/** A read's answer kept under the tenant's change count it was read under (readUnchanged). */

export const logDefaults = {
  readWaitMs: 10_000,
  segmentBytes: 64 * 1024 * 1024,
  recentEvents: 10_000,
  maxBacklogEvents: 1_000_000,
  maxEventsPerLoad: 50_000,
  // The loader's one read buffer (wal-loader.ts): ~40,000 events of bench:ingest's realistic
  // shape, so maxEventsPerLoad still sizes a load; 32 MB read 3× what a load used.
  maxBytesPerLoad: 8 * 1024 * 1024,
  // Loads at most 10 a second unless a read waits for one (then at once): a transaction's fixed
  // cost (its statements, COMMIT, DuckDB's threads handing tasks over) is paid per load, and a
  // loader that keeps up would otherwise run many small ones (docs/events-engine.md, "Load
  // interval").
  loadIntervalMs: 100,
} as const;

/**
 * The event store the server uses: a write-ahead log in front of an engine in a worker thread.
 *
 *   append  → validate-free encode → log (group commit, fdatasync) → answered; then the worker
 *             loads the record into DuckDB in bulk, and the segment is deleted once loaded.
 *   reads   → wait until the loader has reached every event acknowledged before the read
 *             arrived (read-your-writes; bounded, then EventStoreBehindError → 503), then the
 *             worker answers with plain data; dataset ids become names here.
 *   tail    → the newest acknowledged events straight from memory (RecentEvents), so live
 *             tail never waits for the loader.
 *
 * Client event ids are de-duplicated before the log: against the ids still in the log
 * (in memory) and against the engine (one lookup, only for batches that carry ids).
 */
export class LoggedEventStore implements EventStore {
  private loaded: number;
  private readonly loadWaiters = new Set<{ seq: number; resolve: () => void; reject: (error: Error) => void }>();
  /** Set when the worker is gone: nothing will be loaded, so waiting would hang. */
  private engineError: Error | undefined;
  /** The last load failed and none has succeeded since: appends on ClickHouse are answered on the log's durability. */
  private loadFailing = false;
  /** Appends on ClickHouse waiting for the loader (ackLoaded), resolved when it passes their seq or fails. */
  private readonly ackWaiters = new Set<{ seq: number; done: () => void }>();
  private restartDelayMs = 1_000;
  /** `tenant|event_id` of client ids in the log and not loaded yet → seq of their record's end (Infinity while written). */
  private readonly pendingIds = new Map<string, number>();
  private readonly pendingQueue: Array<{ seq: number; keys: string[] }> = [];
  /** De-duplication checks run one at a time, so two retries of one id cannot both pass. */
  private dedupeLane: Promise<unknown> = Promise.resolve();
  private closed = false;
  /**
   * Per tenant, a count that moves whenever its stored events change: each acknowledged append
   * and each delete. A rollup count read under one value holds while it is unchanged.
   */
  private readonly tenantChanges = new Map<string, number>();
  /** The same changes for the other processes of this machine (change-board.ts); DuckDB only. */
  private board: ChangeBoardWriter | undefined;
  private readonly namedPages: NamedPages;
  /** Rollup counts (GET /datasets) by tenant, window start (minute) and datasets, under the tenant's change count. */
  private readonly rollups = new UnchangedAnswers<Array<[string, number]>>(maxRollups);
  /** Pages of events (POST /query) by tenant, filter, size and position, under the tenant's change count. */
  private readonly pages = new UnchangedAnswers<{ events: StoredEvent[]; more: boolean }>(maxPages);
  private readonly options: LoggedEventStoreOptions & Tuning;
  private readonly sqlDialect: SqlDialect;
  /** ClickHouse: this process's log id, which every row it loads carries ('' for a log from before ids). */
  private logId = '';
  /** ClickHouse, live tail: whom to tell of each record (onTailRecord). */
  private readonly tailListeners = new Set<TailRecordListener>();
  /** Per tenant, the seq of its last event in this log since the chains started (TailRecord.prev). */
  private readonly tailChains = new Map<string, number>();
  /** `prev` of a tenant `tailChains` does not hold: none of its events is in the log after it. */
  private tailFloor = 0;
  /** Records durable and not yet loaded, oldest first from `tailHead`; told of again once loaded. */
  private tailPending: TailRecord[] = [];
  private tailHead = 0;
  /** Bytes of the bodies `tailPending` still carries; those before `tailBodyHead` carry none. */
  private tailBodies = 0;
  private tailBodyHead = 0;
  /** `tenant|dataset id` of the datasets appended to, or whose hot keys changed, since takeActiveDatasets last took them. */
  private activeDatasets = new Map<string, ActiveDataset>();
  /** Per dataset, the hot keys last handed to setHotKeys (JSON): a change is noted once, a repeat not at all. */
  private readonly keysSet = new Map<string, string>();

  private constructor(
    options: LoggedEventStoreOptions & Tuning,
    private engine: EngineClient,
    private readonly wal: WriteAheadLog,
    private readonly recent: RecentEvents,
    loaded: number,
    private readonly log: EngineLog,
  ) {
    this.options = options;
    this.namedPages = new NamedPages(options.names);
    this.loaded = loaded;
    this.sqlDialect = options.clickhouseUrl ? 'clickhouse' : 'duckdb';
  }

  /** A worker thread with the DuckDB engine and its loader, reporting to the store `store()` returns. */
  private static startEngine(options: LoggedEventStoreOptions & Tuning, walDir: string, log: EngineLog, store: () => LoggedEventStore | undefined): EngineClient {
    return new EngineClient(
      { dir: options.dir, clickhouseUrl: options.clickhouseUrl, memoryLimit: options.memoryLimit, threads: options.threads, walDir, maxEventsPerLoad: options.maxEventsPerLoad, maxBytesPerLoad: options.maxBytesPerLoad, loadIntervalMs: options.loadIntervalMs, hotKeysIntervalMs: options.hotKeysIntervalMs },
      {
        onLoaded: (seq) => store()?.onLoaded(seq),
        onLoadFailed: (error) => {
          log('error', 'loading events from the log failed; retrying at the next write', error);
          store()?.loadFailed();
        },
        onExit: (error) => {
          log('error', 'the events worker stopped; acknowledged events stay in the log, reads answer 503 until it is restarted', error);
          store()?.engineStopped(error);
        },
      },
    );
  }

  static async open(given: LoggedEventStoreOptions): Promise<LoggedEventStore> {
    const options: LoggedEventStoreOptions & Tuning = { ...logDefaults, ...given };
    const walDir = path.join(options.dir, 'wal');
    const log = options.log ?? ((level, message, error) => console.error(`events ${level}: ${message}${error ? `: ${(error as Error).message}` : ''}`));
    let store: LoggedEventStore | undefined;
    const engine = LoggedEventStore.startEngine(options, walDir, log, () => store);
    try {
      // The engine first: DuckDB's file lock makes it the one writer of this directory, so the
      // log below is never recovered (tail cut) under a running server's feet.
      const loadedAtOpen = await engine.opened;
      const { wal, recovery } = WriteAheadLog.open({ dir: walDir, segmentBytes: options.segmentBytes, loadedSeq: loadedAtOpen });
      if (recovery.cutBytes) log('warn', `cut a torn tail of ${recovery.cutBytes} bytes from the event log (a write the crash interrupted; it was never acknowledged)`);
      const loaded = await engine.catchUp();
      wal.release(loaded);
      store = new LoggedEventStore(options, engine, wal, new RecentEvents(options.recentEvents, wal.position.lastSeq + 1), loaded, log);
      // The worker made the id under the directory's lock before it answered `opened`.
      if (options.clickhouseUrl) store.logId = readOrCreateLogId(options.dir);
      // On DuckDB this process owns the events: the workers of `serve --workers` read its change counts (change-board.ts).
      if (!options.clickhouseUrl) store.board = ChangeBoardWriter.open(changeBoardFile(options.dir));
      wal.onDurable = (position) => store!.engine.durable(position);
      return store;
    } catch (error) {
      await engine.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * The worker stopped without being asked. Reads and waits fail at once (503), appends keep
   * going to the log, and a new worker is started after a pause (doubling up to 30 s while it
   * keeps failing); it loads what the log holds, from the position DuckDB recorded.
   */
  private engineStopped(error: Error): void {
    this.engineError = error;
    this.loadFailed();
    for (const waiter of this.loadWaiters) waiter.reject(error);
    this.loadWaiters.clear();
    if (this.closed) return;
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(this.restartDelayMs * 2, 30_000);
    const timer = setTimeout(() => void this.restartEngine(), delay);
    timer.unref();
  }

  private async restartEngine(): Promise<void> {
    if (this.closed) return;
    const walDir = path.join(this.options.dir, 'wal');
    const engine = LoggedEventStore.startEngine(this.options, walDir, this.log, () => this);
    try {
      await engine.opened;
    } catch (error) {
      this.log('error', 'the events worker could not be restarted; retrying', error);
      return; // its exit handler schedules the next attempt
    }
    if (this.closed) {
      await engine.close();
      return;
    }
    this.engine = engine;
    this.wantedSeq = 0; // the new worker's loader was told of no waiter
    this.engineError = undefined;
    this.restartDelayMs = 1_000;
    this.log('warn', 'the events worker is running again; it loads what the log holds');
    engine.durable(this.wal.position);
  }

  /** Acknowledged events the loader has not loaded yet (bench: freshness; tests). */
  get backlog(): number {
    return this.wal.position.lastSeq - this.loaded;
  }


  private onLoaded(seq: number): void {
    this.loadFailing = false;
    if (seq <= this.loaded) return;
    this.loaded = seq;
    // Before the appends are answered: live tail's sessions, here and on other hosts, get the
    // events about when the client learns they are stored.
    if (this.tailListeners.size) this.tailLoaded(seq);
    for (const waiter of this.ackWaiters) if (waiter.seq <= seq) waiter.done();
    this.wal.release(seq);
    while (this.pendingQueue.length && this.pendingQueue[0]!.seq <= seq) {
      for (const key of this.pendingQueue.shift()!.keys) this.pendingIds.delete(key);
    }
    for (const waiter of this.loadWaiters) {
      if (waiter.seq <= seq) {
        this.loadWaiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  /** A load failed or the worker stopped: appends waiting for the loader are answered now, on the log's durability. */
  private loadFailed(): void {
    this.loadFailing = true;
    for (const waiter of this.ackWaiters) waiter.done();
  }

  /**
   * On ClickHouse an append is answered once its events are in ClickHouse, so a read on any
   * host right after the answer sees them (read-your-writes across hosts); the
   * group commit of the log and the loader's batching make concurrent appends share one INSERT.
   * While loads fail (ClickHouse down), or past the read wait, the answer rests on the log's
   * durability alone, as on DuckDB: the loader loads the events when it can. Never rejects.
   */
  private ackLoaded(seq: number): Promise<void> {
    if (this.loaded >= seq || this.loadFailing || this.engineError) return Promise.resolve();
    this.wantLoaded(seq);
    return new Promise((resolve) => {
      const waiter = {
        seq,
        done: () => {
          clearTimeout(timer);
          this.ackWaiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, this.options.readWaitMs);
      timer.unref();
      this.ackWaiters.add(waiter);
    });
  }

  /** The highest seq someone waits to be loaded that the worker was told of (one message per new one). */
  private wantedSeq = 0;
  /** Someone waits for the events up to `seq`: the loader takes them without waiting for its interval. */
  private wantLoaded(seq: number): void {
    if (seq <= this.wantedSeq) return;
    this.wantedSeq = seq;
    this.engine.loadNow(seq);
  }

  /** Resolves once the loader holds every event up to `seq`; rejects past the bound. */
  private waitLoaded(seq: number, what: string): Promise<void> {
    if (this.loaded >= seq) return Promise.resolve();
    if (this.engineError) return Promise.reject(this.engineError);
    this.wantLoaded(seq);
    return new Promise((resolve, reject) => {
      const waiter = {
        seq,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.loadWaiters.delete(waiter);
        reject(new EventStoreBehindError(what, this.options.readWaitMs));
      }, this.options.readWaitMs);
      timer.unref();
      this.loadWaiters.add(waiter);
    });
  }

  /** Read-your-writes: every event acknowledged before this read is loaded first. */
  private fresh(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    return this.waitLoaded(this.wal.position.lastSeq, 'the events acknowledged before this request are still being loaded');
  }

  async append(tenant: Tenant, events: readonly NewEvent[]): Promise<AppendResult> {
    if (this.closed) throw new Error('event store closed');
    if (events.length === 0) return { stored: 0, duplicates: 0, lastSeq: 0 };
    await this.backPressure();
    let kept = events;
    let keys: string[] = [];
    if (events.some((e) => e.clientEventId)) ({ kept, keys } = await this.withoutDuplicates(tenant, events));
    if (kept.length === 0) return { stored: 0, duplicates: events.length, lastSeq: 0 };
    const datasets: string[] = [];
    for (const e of kept) if (e.datasetId !== datasets[datasets.length - 1]) datasets.push(e.datasetId);
    let body: Buffer;
    try {
      body = encodeBatch(tenant, this.options.now(), kept);
    } catch (error) {
      for (const key of keys) this.pendingIds.delete(key);
      throw error;
    }
    return this.appendBody(tenant, body, kept.length, events.length - kept.length, keys, datasets);
  }

  /**
   * A batch another process encoded (the events node's callers, event-batch.ts's frameAppend),
   * checked by the caller (checkBatch), without client event ids: it goes to the log as it is,
   * never parsed or encoded again here. Batches with client ids go through `append`.
   */
  async appendEncoded(tenant: Tenant, body: Buffer, count: number): Promise<AppendResult> {
    if (this.closed) throw new Error('event store closed');
    if (count === 0) return { stored: 0, duplicates: 0, lastSeq: 0 };
    await this.backPressure();
    // Consecutive events mostly share a dataset (BatchReader decodes an id only when it changes).
    const reader = new BatchReader(body);
    const datasets: string[] = [];
    while (reader.next()) if (reader.datasetId !== datasets[datasets.length - 1]) datasets.push(reader.datasetId);
    return this.appendBody(tenant, body, count, 0, [], datasets);
  }

  /** At most this many datasets are noted between two takes; the others are noted when they next take events. */
  private static readonly maxActiveDatasets = 100_000;

  private noteActive(tenant: Tenant, datasetId: string, keysChanged = false): void {
    const key = `${tenantKey(tenant)}|${datasetId}`;
    const known = this.activeDatasets.get(key);
    if (known) {
      known.keysChanged ||= keysChanged;
      return;
    }
    if (this.activeDatasets.size >= LoggedEventStore.maxActiveDatasets) return;
    this.activeDatasets.set(key, { tenant, datasetId, keysChanged });
  }

  takeActiveDatasets(): ActiveDataset[] {
    const taken = [...this.activeDatasets.values()];
    this.activeDatasets = new Map();
    return taken;
  }

  /** A loader far behind makes writers wait (bounded) rather than grow the log. */
  private async backPressure(): Promise<void> {
    const backlog = this.wal.position.lastSeq - this.options.maxBacklogEvents;
    if (backlog > this.loaded) await this.waitLoaded(backlog, 'the event loader is behind; retry shortly');
  }

  /**
   * Writes one batch body to the log (group commit) and answers when it is durable (on
   * ClickHouse: loaded). `datasets`: the batch's, noted once durable for the hot keys' task.
   */
  private async appendBody(tenant: Tenant, body: Buffer, count: number, duplicates: number, keys: readonly string[], datasets: readonly string[]): Promise<AppendResult> {
    try {
      // The tenant's events change when the append is over, acknowledged or failed (a failed
      // write may still have reached the log): a read that started before is not served again.
      const range = await this.wal.append(body, count, (r) => this.durable(tenant, r.firstSeq, count, body)).finally(() => this.changed(tenant));
      for (const d of datasets) this.noteActive(tenant, d);
      if (keys.length) {
        // The loader's answer is a message, so it cannot have arrived before this continuation.
        for (const key of keys) this.pendingIds.set(key, range.lastSeq);
        this.pendingQueue.push({ seq: range.lastSeq, keys: [...keys] });
      }
      if (this.sqlDialect === 'clickhouse') await this.ackLoaded(range.lastSeq);
      return { stored: count, duplicates, lastSeq: range.lastSeq };
    } catch (error) {
      for (const key of keys) this.pendingIds.delete(key);
      throw error;
    }
  }

  /**
   * A record is durable (called in seq order, inside the log's write). DuckDB: into the recent
   * events live tail reads. ClickHouse: chained to the tenant's previous record, told now (this
   * process's sessions take it, as the embedded engine's tail reads its recent events), and held
   * until loaded to be told again (tailLoaded: other processes take it from ClickHouse's side).
   */
  private durable(tenant: Tenant, firstSeq: number, count: number, body: Buffer): void {
    if (this.sqlDialect === 'duckdb') {
      this.recent.add(tenant, firstSeq, count, body);
      return;
    }
    if (!this.tailListeners.size) return;
    const key = tenantKey(tenant);
    const record: TailRecord = { tenant, log: this.logId, firstSeq, count, prev: this.tailChains.get(key) ?? this.tailFloor, body };
    if (this.tailChains.size >= maxTailChains && !this.tailChains.has(key)) {
      // Every tenant's last event is before this record: a floor there is true of all of them.
      this.tailChains.clear();
      this.tailFloor = firstSeq - 1;
    }
    this.tailChains.set(key, lastSeqOf(record));
    this.tellTail(record, false);
    this.tailPending.push(record);
    this.tailBodies += body.length;
    while (this.tailPending.length - this.tailHead > maxTailPendingRecords) {
      const forgotten = this.tailPending[this.tailHead++]!;
      if (forgotten.body) this.tailBodies -= forgotten.body.length;
    }
    this.compactTailPending();
    this.tailBodyHead = Math.max(this.tailBodyHead, this.tailHead);
    while (this.tailBodies > maxTailPendingBytes && this.tailBodyHead < this.tailPending.length) {
      const held = this.tailPending[this.tailBodyHead]!;
      if (held.body) {
        this.tailPending[this.tailBodyHead] = { ...held, body: undefined };
        this.tailBodies -= held.body.length;
      }
      this.tailBodyHead++;
    }
  }

  /** ClickHouse holds every event of this log up to `seq`: the held records up to it are told again. */
  private tailLoaded(seq: number): void {
    while (this.tailHead < this.tailPending.length && lastSeqOf(this.tailPending[this.tailHead]!) <= seq) {
      const record = this.tailPending[this.tailHead++]!;
      if (record.body) this.tailBodies -= record.body.length;
      this.tellTail(record, true);
    }
    this.compactTailPending();
  }

  private compactTailPending(): void {
    if (this.tailHead > 1_024 && this.tailHead * 2 > this.tailPending.length) {
      this.tailPending = this.tailPending.slice(this.tailHead);
      this.tailBodyHead = Math.max(0, this.tailBodyHead - this.tailHead);
      this.tailHead = 0;
    }
  }

  private tellTail(record: TailRecord, loaded: boolean): void {
    for (const listener of this.tailListeners) {
      try {
        listener(record, loaded);
      } catch (error) {
        // Inside the log's write, or before the appends are answered: a listener's fault must not fail or hold them up.
        this.log('warn', 'a live tail listener failed', error);
      }
    }
  }

  /**
   * ClickHouse: tells `listener` of each record of this process's log, once when it is durable
   * and again once ClickHouse holds it (just before the appends it holds are answered), in seq
   * order each time (live tail, src/tail/relay.ts). False (and never told) on DuckDB, whose
   * tail reads the recent events in memory.
   */
  onTailRecord(listener: TailRecordListener): boolean {
    if (this.sqlDialect === 'duckdb') return false;
    // The chains start here: no record before was remembered.
    if (!this.tailListeners.size) this.tailFloor = this.wal.position.lastSeq;
    this.tailListeners.add(listener);
    return true;
  }

  private withoutDuplicates(tenant: Tenant, events: readonly NewEvent[]): Promise<{ kept: NewEvent[]; keys: string[] }> {
    const run = this.dedupeLane.then(async () => {
      const prefix = `${tenantKey(tenant)}|`;
      const asked = [...new Set(events.filter((e) => e.clientEventId && !this.pendingIds.has(prefix + e.eventId)).map((e) => e.eventId))];
      const stored = new Set(asked.length ? await this.engine.existingIds(tenant, asked) : []);
      const kept: NewEvent[] = [];
      const keys: string[] = [];
      for (const e of events) {
        if (e.clientEventId) {
          const key = prefix + e.eventId;
          if (this.pendingIds.has(key) || stored.has(e.eventId)) continue;
          // Claimed now, before the log write, so a retry racing this one sees it.
          this.pendingIds.set(key, Infinity);
          keys.push(key);
        }
        kept.push(e);
      }
      return { kept, keys };
    });
    this.dedupeLane = run.catch(() => undefined);
    return run;
  }

  private named(tenant: Tenant, events: StoredEvent[], known?: ReadonlyMap<string, string>): Promise<StoredEvent[]> {
    return nameDatasets(tenant, events, this.options.names, known);
  }

  soql(tenant: Tenant, request: SoqlRequest): Promise<SoqlAnswer> {
    return readSoql(this, tenant, request);
  }

  async query(tenant: Tenant, request: EventPageRequest): Promise<EventPage> {
    const page = await this.pageRows(tenant, request);
    // Named copies, made once per kept page and set of names (named-pages.ts): the kept page stays as the engine answered it.
    const events = await this.namedPages.of(tenant, page.events, request.names);
    const { more } = page;
    const last = events[events.length - 1];
    return { events, next: more && last ? { ts: last.ts, event_id: last.event_id } : undefined };
  }

  async aggregate(tenant: Tenant, request: AggregateRequest): Promise<RawGroupRow[]> {
    await this.fresh();
    return this.engine.aggregate(tenant, request);
  }

  async stats(tenant: Tenant, request: StatsRequest): Promise<RawStatsRow[]> {
    await this.fresh();
    return this.engine.stats(tenant, request);
  }

  async rollupCounts(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Map<string, number>> {
    const counts = new Map<string, number>(datasetIds.map((id) => [id, 0]));
    if (!datasetIds.length) return counts;
    for (const [id, n] of await this.rollupRows(tenant, datasetIds, sinceMs)) counts.set(id, n);
    return counts;
  }

  /**
   * The rollup's sums, read again only when the tenant's events changed (an append or delete
   * since) or the window moved to another minute: GET /datasets is asked far more often than
   * that, and each DuckDB read cost ~2 ms of CPU. Exact: the sums are over whole minutes from
   * the window's first, and the change count is taken before the read waits for the loader
   * (read-your-writes holds as for any read). On ClickHouse other hosts may load events into
   * the same tables unseen, so it always reads.
   */
  private rollupRows(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Array<[string, number]>> {
    return this.readUnchanged(this.rollups, tenant, `${Math.floor(sinceMs / 60_000)}|${datasetIds.join(',')}`, async () => {
      await this.fresh();
      return this.engine.rollupCounts(tenant, datasetIds, sinceMs);
    });
  }

  /**
   * A page of events as the engine answered it (dataset ids, not names), read again only when
   * the tenant's events changed: the same page asked again (a dashboard refreshing a query, a
   * client polling) cost a DuckDB scan and 100 events across the worker boundary each time.
   * Exact as rollupRows is: the filter's SQL and values (relative times resolved) are the key,
   * and the engine orders a page completely (ts, event_id). Shared: callers copy before changing.
   */
  private pageRows(tenant: Tenant, request: EventPageRequest): Promise<{ events: StoredEvent[]; more: boolean }> {
    const read = async () => {
      await this.fresh();
      return this.engine.query(tenant, { filter: request.filter, limit: request.limit, after: request.after, ...(request.lane ? { lane: request.lane } : {}) });
    };
    const params = request.filter.params;
    if (!keyableParams(params)) return read();
    const after = request.after ? `${request.after.ts}|${request.after.event_id}` : '';
    const key = `${request.limit}|${after}|${JSON.stringify(params)}|${request.filter.where}`;
    return this.readUnchanged(this.pages, tenant, key, read);
  }

  /**
   * `read`'s answer, kept in `cache` under `key` and the tenant's change count taken before it
   * runs, and served again while that count is unchanged: every event of the tenant
   * acknowledged before the answer is served was acknowledged before its read began, which
   * waited for the loader to reach it. On ClickHouse other hosts may load events into the same
   * tables unseen, so there it always reads.
   */
  private readUnchanged<T>(cache: UnchangedAnswers<T>, tenant: Tenant, key: string, read: () => Promise<T>): Promise<T> {
    const change = this.changeCount(tenant);
    // Closed or the worker gone: the read fails as every read does then (503), not served from here.
    if (change === undefined) return read();
    return cache.get(`${tenantKey(tenant)}|${key}`, change, read);
  }

  /** The tenant's change count (EventStore.changeCount): what readUnchanged keeps answers under. */
  changeCount(tenant: Tenant): number | undefined {
    if (this.sqlDialect !== 'duckdb' || this.closed || this.engineError) return undefined;
    return this.tenantChanges.get(tenantKey(tenant)) ?? 0;
  }

  /** The tenant's stored events changed (rollupRows). */
  private changed(tenant: Tenant): void {
    const owner = tenantKey(tenant);
    this.tenantChanges.set(owner, (this.tenantChanges.get(owner) ?? 0) + 1);
    this.board?.bump(owner);
  }

  async fieldStats(tenant: Tenant, request: FieldStatsRequest): Promise<FieldStats> {
    await this.fresh();
    return this.engine.fieldStats(tenant, request);
  }

  async deleteBefore(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number> {
    await this.fresh();
    // Before and after: a read during the delete may see part of it.
    this.changed(tenant);
    try {
      return await this.engine.deleteBefore(tenant, datasetId, beforeMs);
    } finally {
      this.changed(tenant);
    }
  }

  /**
   * On DuckDB, from memory when the recent events reach back far enough (the one log's newest);
   * on ClickHouse always from ClickHouse: the other ingesters' events are only there. Otherwise
   * once the loader has passed what this process acknowledged: on ClickHouse live tail hands
   * this log's records on as soon as they are durable, so a read must hold them too.
   */
  async readAfter(tenant: Tenant, request: TailRequest): Promise<StoredEvent[]> {
    const seq = singleSeq(request.after);
    if (seq !== undefined && this.sqlDialect === 'duckdb' && (request.filter === matchAll || request.filter.where === 'true')) {
      const recent = this.recent.after(tenant, seq, request.limit);
      if (recent) return this.named(tenant, recent);
    }
    await this.fresh();
    return this.named(tenant, await this.engine.readAfter(tenant, request));
  }

  /**
   * DuckDB: after the log's last acknowledged event. ClickHouse: per log that stored events of
   * the tenant in the last minute, its highest seq there, and other logs' events from a minute
   * ago on (tail-position.ts: a host whose clock is behind by less loses nothing).
   */
  async tailStart(tenant: Tenant): Promise<TailPosition> {
    if (this.sqlDialect === 'duckdb') return singleLog(this.wal.position.lastSeq);
    await this.fresh();
    const since = this.options.now() - tailClockSlackMs;
    const logs = await this.engine.logPositions(tenant, since);
    // This process's own log by its last durable seq, named even when the tenant wrote nothing
    // through it lately: its next records then follow the position without a read (onTailRecord).
    logs[this.logId] = Math.max(logs[this.logId] ?? 0, this.wal.position.lastSeq);
    return { logs, since };
  }

  /**
   * DuckDB: the one log's last acknowledged seq — every read waits for the loader to reach it
   * first (`fresh`), as POST /query answers with the events acknowledged before it. ClickHouse:
   * every log's recorded position (other hosts' events are loaded by their own processes).
   */
  async loadedPositions(): Promise<Record<string, number>> {
    if (this.sqlDialect === 'duckdb') return { '': this.wal.position.lastSeq };
    return this.engine.loadedPositions();
  }

  /**
   * A change of keys (a PATCH, a schema request, another process's choice) is noted for the
   * background task even without new events: the rows stored before it are filled at its next tick.
   */
  async setHotKeys(tenant: Tenant, datasetId: string, keys: readonly HotKey[]): Promise<void> {
    await this.engine.setHotKeys(tenant, datasetId, keys);
    const text = JSON.stringify(keys);
    if (this.keysSet.get(datasetId) === text) return;
    // Bounded like the notes: past it, a forgotten dataset's next repeat is noted once more.
    if (this.keysSet.size >= LoggedEventStore.maxActiveDatasets) this.keysSet.delete(this.keysSet.keys().next().value!);
    this.keysSet.set(datasetId, text);
    this.noteActive(tenant, datasetId, true);
  }

  backfillHotKeys(tenant: Tenant, datasetId: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    return this.engine.backfillHotKeys(tenant, datasetId);
  }

  /** No wait for the loader: a layout the answer does not know only sends its rows to the JSON. */
  hotLayouts(tenant: Tenant, datasetIds: readonly string[]): Promise<HotLayout[]> {
    if (!datasetIds.length) return Promise.resolve([]);
    return this.engine.hotLayouts(tenant, datasetIds);
  }

  async dialect(): Promise<SqlDialect> {
    return this.sqlDialect;
  }

  async lastSeq(): Promise<number> {
    return this.wal.position.lastSeq;
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('event store closed');
    await this.engine.ping();
  }

  /** Waits for the log's writes, lets the loader load everything, then stops the worker. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.wal.close();
    this.closed = true;
    const loaded = await this.engine.close();
    this.wal.release(loaded);
    this.board?.close();
    this.board = undefined;
  }
}
