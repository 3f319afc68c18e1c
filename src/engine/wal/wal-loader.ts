import fs from 'node:fs';
import path from 'node:path';
import type { EventEngine, LoadRecord } from '../engine.js';
import { listSegments, parseRecords, recordHeaderBytes, type WalPosition, type WalRecord } from './wal.js';

export interface WalLoaderOptions {
  dir: string;
  /** Events per load (one engine transaction); more waits for the next load. */
  maxEventsPerLoad: number;
  /** Record bytes read per load: the size of the loader's one read buffer (a bigger record is read on its own). */
  maxBytesPerLoad: number;
  /**
   * A load starts at most this often (ms from the start of the one before) unless it would be
   * full or someone waits for it (`loadNow`): loads gather more events, so fewer transactions
   * carry the same events. 0: a load starts as soon as the one before ends.
   */
  loadIntervalMs?: number;
  /** Told after each load with the new position. */
  onLoaded: (loadedSeq: number) => void;
  onError: (error: unknown) => void;
}

/**
 * Moves the write-ahead log's records into an engine, oldest first, in loads of many records
 * (one transaction each). It reads only what the log has made durable (`durable`, told by the
 * writer after each sync); at start-up, before any new write, it reads every segment to its
 * end (`catchUp`). Engine-neutral: it runs in the thread that owns the engine.
 */
export class WalLoader {
  private loaded = 0;
  private durable: WalPosition | undefined;
  private cursor: { segment: string; offset: number } | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** After a failed load, the next attempt comes by itself after this long (doubling to 30 s). */
  private retryMs = 1_000;
  private retryTimer: NodeJS.Timeout | undefined;
  /** When the last load started (performance.now()), and the timer of a load held back by loadIntervalMs. */
  private lastLoadStart = -Infinity;
  private paceTimer: NodeJS.Timeout | undefined;
  /** Someone waits for every event up to this seq to be loaded: no load waits for the interval before it is. */
  private wantedSeq = 0;
  /**
   * Every load reads into this one buffer (grown up to maxBytesPerLoad): the engine is done with
   * a record's body when its load settles (engine.ts), and the next read comes after that. A
   * fresh buffer per load outlived the young generation while DuckDB loaded it, so dead ones
   * waited for a full GC: 2–3 of them (89 MB at 32 MB each) in the worker at peak.
   */
  private buffer = Buffer.alloc(0);

  constructor(
    private readonly engine: EventEngine,
    private readonly options: WalLoaderOptions,
  ) {}

  get loadedSeq(): number {
    return this.loaded;
  }

  async start(): Promise<number> {
    this.loaded = await this.engine.loadedSeq();
    return this.loaded;
  }

  /** Loads every record the segments hold (start-up: the writer has cut torn tails already). */
  async catchUp(): Promise<number> {
    for (;;) {
      const records = this.readNext(undefined);
      if (!records) break;
      await this.loadRecords(records);
    }
    return this.loaded;
  }

  /** The writer made records durable up to here: load them. */
  notify(position: WalPosition): void {
    this.durable = position;
    this.kick();
  }

  /**
   * A read (or an append answered once loaded) waits for the events up to `seq`: load them now,
   * without waiting for loadIntervalMs.
   */
  loadNow(seq: number): void {
    if (seq <= this.wantedSeq) return;
    this.wantedSeq = seq;
    this.kick();
  }

  /** Resolves once everything durable so far is loaded (or the loader stopped on an error). */
  async drain(): Promise<void> {
    this.loadNow(Infinity);
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.paceTimer);
  }

  /**
   * How long the next load waits for more events: until loadIntervalMs after the last load's
   * start, unless it would be full already or someone waits for the events it holds.
   */
  private paceWait(): number {
    const interval = this.options.loadIntervalMs ?? 0;
    if (interval <= 0 || !this.durable || this.loaded < this.wantedSeq) return 0;
    if (this.durable.lastSeq - this.loaded >= Math.min(this.options.maxEventsPerLoad, this.engine.loadRoom?.() ?? Infinity)) return 0;
    return this.lastLoadStart + interval - performance.now();
  }

  private kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    const wait = this.paceWait();
    if (wait > 0) {
      this.paceTimer ??= setTimeout(() => {
        this.paceTimer = undefined;
        if (!this.stopped) this.kick();
      }, wait);
      return;
    }
    clearTimeout(this.paceTimer);
    this.paceTimer = undefined;
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) this.kick();
    });
  }

  private async run(): Promise<void> {
    this.again = false;
    try {
      for (;;) {
        if (this.stopped || !this.durable || this.loaded >= this.durable.lastSeq) return;
        if (this.paceWait() > 0) {
          this.again = true; // kick() sets the timer
          return;
        }
        this.lastLoadStart = performance.now();
        const records = this.readNext(this.durable);
        if (!records) return;
        await this.loadRecords(records);
        this.retryMs = 1_000;
      }
    } catch (error) {
      this.options.onError(error);
      // A failing engine (a server that is down) keeps the events in the log; the load is
      // tried again at the next notification or after a pause, whichever comes first.
      if (!this.retryTimer && !this.stopped) {
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          if (!this.stopped) this.kick();
        }, this.retryMs);
        this.retryTimer.unref();
        this.retryMs = Math.min(this.retryMs * 2, 30_000);
      }
    }
  }

  private async loadRecords(records: WalRecord[]): Promise<void> {
    const load: LoadRecord[] = [];
    let lastSeq = this.loaded;
    for (const r of records) {
      const last = r.firstSeq + r.count - 1;
      if (last <= this.loaded) continue;
      if (r.firstSeq !== lastSeq + 1) throw new Error(`the event log skips from seq ${lastSeq} to ${r.firstSeq}`);
      load.push({ firstSeq: r.firstSeq, body: r.body });
      lastSeq = last;
    }
    const end = records[records.length - 1]!.end;
    if (load.length) await this.engine.load(load, lastSeq);
    this.loaded = lastSeq;
    this.cursor = { segment: this.cursor!.segment, offset: end };
    this.options.onLoaded(this.loaded);
  }

  /**
   * The next whole records after the cursor, up to the load limits; undefined when there are
   * none yet. With `durable` undefined every segment is read to its end.
   */
  private readNext(durable: WalPosition | undefined): WalRecord[] | undefined {
    for (;;) {
      const segments = listSegments(this.options.dir);
      if (!this.cursor || !segments.includes(this.cursor.segment)) {
        const next = segments.find((s) => !this.cursor || s > this.cursor.segment);
        if (!next) return undefined;
        this.cursor = { segment: next, offset: 0 };
      }
      const { segment, offset } = this.cursor;
      if (durable && segment > durable.segment) return undefined;
      const file = path.join(this.options.dir, segment);
      let fd: number;
      try {
        fd = fs.openSync(file, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
        throw error;
      }
      try {
        const end = durable && segment === durable.segment ? durable.bytes : fs.fstatSync(fd).size;
        if (offset >= end) {
          if (durable && segment === durable.segment) return undefined;
          const later = segments.find((s) => s > segment);
          if (!later) return undefined;
          this.cursor = { segment: later, offset: 0 };
          continue;
        }
        let size = Math.min(end - offset, this.options.maxBytesPerLoad);
        let bytes = readAt(fd, offset, this.readBuffer(size));
        let { records } = parseRecords(bytes, offset);
        if (records.length === 0 && size < end - offset) {
          // One record bigger than a load's bytes: read exactly it, into a buffer of its own.
          size = Math.min(end - offset, recordHeaderBytes + bytes.readUInt32LE(4));
          bytes = readAt(fd, offset, Buffer.allocUnsafe(size));
          records = parseRecords(bytes, offset).records;
        }
        if (records.length === 0) throw new Error(`the event log segment ${file} is damaged at byte ${offset}`);
        return recordsForLoad(records, this.options.maxEventsPerLoad, this.engine.loadRoom?.() ?? Infinity);
      } finally {
        fs.closeSync(fd);
      }
    }
  }

  /** The first `size` bytes of the read buffer, grown (doubling, at most to maxBytesPerLoad) when short. */
  private readBuffer(size: number): Buffer {
    if (this.buffer.length < size) {
      this.buffer = Buffer.allocUnsafe(Math.min(this.options.maxBytesPerLoad, Math.max(size, 2 * this.buffer.length, 64 * 1024)));
    }
    return this.buffer.subarray(0, size);
  }
}

/**
 * The records of the next load, oldest first, always at least one: those that fit in `max`
 * events and, when the first one fits the engine's `room`, in that too (so the load ends where
 * the engine's storage unit does; when not even the first fits, the engine closes the unit
 * before the load and a full one starts the next).
 */
export function recordsForLoad<R extends { count: number }>(records: readonly R[], max: number, room: number): R[] {
  const limit = records.length && records[0]!.count <= room ? Math.min(max, room) : max;
  const kept: R[] = [];
  let events = 0;
  for (const r of records) {
    if (kept.length && events + r.count > limit) break;
    kept.push(r);
    events += r.count;
  }
  return kept;
}

/** Fills `buffer` from the file at `position`; the bytes read (fewer at the file's end). */
function readAt(fd: number, position: number, buffer: Buffer): Buffer {
  const length = buffer.length;
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return buffer.subarray(0, done);
}
