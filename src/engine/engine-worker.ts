/**
 * The events worker thread: owns the DuckDB engine and its loader, so no DuckDB call (and no
 * chunk building) runs on the event loop that serves HTTP. Messages in, plain data out:
 *
 *   in:  { t: 'call', id, method, args }   a read (engine.ts's EngineReadMethod)
 *        { t: 'catch-up' }                 start-up: load every record in the log
 *        { t: 'durable', position }        the log is durable up to here: load it
 *        { t: 'load-now', seq }            someone waits for the events up to seq: no pacing
 *        { t: 'close' }                    load what is durable, close the engine, exit
 *   out: { t: 'reply', id, value | error } { t: 'loaded', seq } { t: 'load-failed', error }
 */
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { DuckDbTablesOptions } from './duckdb/duckdb-tables.js';
import type { EngineReadMethod, EventEngine } from './engine.js';
import { lockEventsDir } from './wal/dir-lock.js';
import { readOrCreateLogId } from './wal/log-id.js';
import { WalLoader } from './wal/wal-loader.js';
import type { WalPosition } from './wal/wal.js';

export interface EngineWorkerData extends DuckDbTablesOptions {
  /** clickhouse://… when events live in ClickHouse; else the embedded DuckDB in `dir`. */
  clickhouseUrl?: string;
  walDir: string;
  maxEventsPerLoad: number;
  maxBytesPerLoad: number;
  /** WalLoader's loadIntervalMs. */
  loadIntervalMs: number;
  /** OPS_HOT_KEYS_INTERVAL_MS: how soon the other ingesters take a dataset's new hot keys (ClickHouse). */
  hotKeysIntervalMs?: number;
}

export type ToWorker =
  | { t: 'call'; id: number; method: EngineReadMethod; args: unknown[] }
  | { t: 'catch-up'; id: number }
  | { t: 'durable'; position: WalPosition }
  | { t: 'load-now'; seq: number }
  | { t: 'close'; id: number };

export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
}

export type FromWorker =
  | { t: 'reply'; id: number; value?: unknown; error?: SerializedError }
  | { t: 'loaded'; seq: number }
  | { t: 'load-failed'; error: SerializedError };

const serialize = (error: unknown): SerializedError =>
  error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { name: 'Error', message: String(error) };

const port = parentPort!;
const data = workerData as EngineWorkerData;
const post = (message: FromWorker) => port.postMessage(message);

let engine: EventEngine | undefined;
let loader: WalLoader | undefined;
let unlock: (() => void) | undefined;

/** The engine the configuration names; each loads its driver only when chosen. */
async function openEngine(): Promise<EventEngine> {
  if (data.clickhouseUrl) {
    unlock = lockEventsDir(data.dir);
    try {
      const { ClickHouseEngine } = await import('./clickhouse/clickhouse-engine.js');
      return await ClickHouseEngine.open(data.clickhouseUrl, { memoryLimit: data.memoryLimit, logId: readOrCreateLogId(data.dir), hotKeysIntervalMs: data.hotKeysIntervalMs });
    } catch (error) {
      unlock();
      throw error;
    }
  }
  const { DuckDbEngine } = await import('./duckdb/duckdb-tables.js');
  return DuckDbEngine.open(data);
}

// Linux: the thread's name (top -H, ps -L, /proc/PID/task/*/comm), before DuckDB starts the
// threads of its own, which inherit it; Node names no thread. Best effort.
try {
  fs.writeFileSync('/proc/thread-self/comm', 'ops-events');
} catch {
  // not Linux
}

const opening = (async () => {
  engine = await openEngine();
  loader = new WalLoader(engine, {
    dir: data.walDir,
    maxEventsPerLoad: data.maxEventsPerLoad,
    maxBytesPerLoad: data.maxBytesPerLoad,
    loadIntervalMs: data.loadIntervalMs,
    onLoaded: (seq) => post({ t: 'loaded', seq }),
    onError: (error) => post({ t: 'load-failed', error: serialize(error) }),
  });
  return loader.start();
})();

async function handle(message: ToWorker): Promise<unknown> {
  switch (message.t) {
    case 'catch-up':
      await opening;
      return loader!.catchUp();
    case 'call': {
      await opening;
      const method = engine![message.method] as (...args: unknown[]) => Promise<unknown>;
      return method.apply(engine, message.args);
    }
    case 'close':
      await opening.catch(() => undefined);
      if (loader) {
        await loader.drain();
        loader.stop();
      }
      await engine?.close();
      unlock?.();
      return loader?.loadedSeq ?? 0;
    default:
      return undefined;
  }
}

port.on('message', (message: ToWorker) => {
  if (message.t === 'durable') {
    void opening.then(() => loader!.notify(message.position), () => undefined);
    return;
  }
  if (message.t === 'load-now') {
    void opening.then(() => loader!.loadNow(message.seq), () => undefined);
    return;
  }
  const id = message.id;
  handle(message).then(
    (value) => post({ t: 'reply', id, value }),
    (error: unknown) => post({ t: 'reply', id, error: serialize(error) }),
  );
});

// The first reply: the engine is open (or why not) and its loaded position.
opening.then(
  (seq) => post({ t: 'reply', id: 0, value: seq }),
  (error: unknown) => post({ t: 'reply', id: 0, error: serialize(error) }),
);
