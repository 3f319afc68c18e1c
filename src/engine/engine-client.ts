import { Worker } from 'node:worker_threads';
import type { EngineReadMethod, EventEngine } from './engine.js';
import type { EngineWorkerData, FromWorker, SerializedError, ToWorker } from './engine-worker.js';
import { EventStoreLockedError, EventStoreResourceError, EventStoreUnavailableError } from './event-store.js';
import type { WalPosition } from './wal/wal.js';

/** The engine's own errors keep their class across the thread boundary (callers test them). */
function revive(error: SerializedError): Error {
  let revived: Error;
  if (error.name === 'EventStoreResourceError') revived = new EventStoreResourceError(new Error(error.message));
  else if (error.name === 'EventStoreLockedError') revived = new EventStoreLockedError(/store (\S+)/.exec(error.message)?.[1] ?? 'events.duckdb', new Error(error.message));
  else if (error.name === 'EventStoreUnavailableError') revived = new EventStoreUnavailableError(error.message);
  else revived = Object.assign(new Error(error.message), { name: error.name });
  if (error.stack) revived.stack = `${revived.name}: ${revived.message}\n    in the events worker:\n${error.stack.split('\n').slice(1).join('\n')}`;
  return revived;
}

// Under tsx (tests, `npm run dev`) the worker is TypeScript: Node's worker loader does not
// inherit tsx's hooks (privatenumber/tsx#354), so a one-line bootstrap registers them first.
const isTypeScript = import.meta.url.endsWith('.ts');
const workerUrl = new URL(`./engine-worker.${isTypeScript ? 'ts' : 'js'}`, import.meta.url);

export interface EngineClientEvents {
  onLoaded: (seq: number) => void;
  /** A load failed (the engine's server is down, say): the loader tries again at the next write or after a pause. */
  onLoadFailed: (error: Error) => void;
  /** The worker ended without being asked (a crash); pending calls were rejected. */
  onExit: (error: Error) => void;
}

/**
 * The main thread's side of the events worker: each read is a message and a promise. The
 * engine's methods are called by name; everything crossing is plain data (structured clone).
 */
export class EngineClient implements Pick<EventEngine, EngineReadMethod> {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private closing = false;
  /** Why the worker is gone (a crash, or close): later calls fail at once instead of hanging. */
  private gone: Error | undefined;
  /** Resolves with the engine's loaded position once it is open. */
  readonly opened: Promise<number>;

  constructor(data: EngineWorkerData, events: EngineClientEvents) {
    // A small young generation, like the main thread's --max-semi-space-size=8 (npm start): the
    // loader allocates fast and short-lived, and a large nursery only raised peak RSS.
    const options = { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: 24 } };
    this.worker = isTypeScript
      ? new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(workerUrl.href)}); });`, { ...options, eval: true })
      : new Worker(workerUrl, options);
    this.opened = new Promise((resolve, reject) => this.calls.set(0, { resolve: resolve as (v: unknown) => void, reject }));
    this.worker.on('message', (message: FromWorker) => {
      if (message.t === 'loaded') return events.onLoaded(message.seq);
      if (message.t === 'load-failed') return events.onLoadFailed(revive(message.error));
      const call = this.calls.get(message.id);
      if (!call) return;
      this.calls.delete(message.id);
      if (message.error) call.reject(revive(message.error));
      else call.resolve(message.value);
    });
    const fail = (error: Error) => {
      if (this.gone) return;
      this.gone = error;
      for (const call of this.calls.values()) call.reject(error);
      this.calls.clear();
      if (!this.closing) events.onExit(error);
    };
    this.worker.on('error', (error) => fail(new EventStoreUnavailableError(`the events worker stopped: ${error.message}`, error)));
    this.worker.on('exit', (code) => fail(new EventStoreUnavailableError(`the events worker stopped (exit code ${code})`)));
  }

  private send<T>(message: Omit<ToWorker & { id: number }, 'id'>): Promise<T> {
    const id = this.nextId++;
    if (this.gone) return Promise.reject(this.gone);
    return new Promise<T>((resolve, reject) => {
      this.calls.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  private call<T>(method: EngineReadMethod, args: unknown[]): Promise<T> {
    return this.send<T>({ t: 'call', method, args } as Omit<ToWorker & { id: number }, 'id'>);
  }

  /** Start-up: loads every record of the log; resolves with the loaded position. */
  catchUp(): Promise<number> {
    return this.send({ t: 'catch-up' });
  }

  durable(position: WalPosition): void {
    if (this.gone) return;
    this.worker.postMessage({ t: 'durable', position } satisfies ToWorker);
  }

  /** Someone waits for the events up to `seq`: the loader loads them without waiting for its interval. */
  loadNow(seq: number): void {
    if (this.gone) return;
    this.worker.postMessage({ t: 'load-now', seq } satisfies ToWorker);
  }

  /** Loads what is durable, closes the engine and ends the thread; resolves with the position. */
  async close(): Promise<number> {
    this.closing = true;
    if (this.gone) return 0;
    try {
      return await this.send<number>({ t: 'close' });
    } finally {
      await this.worker.terminate();
    }
  }

  query: EventEngine['query'] = (...args) => this.call('query', args);
  aggregate: EventEngine['aggregate'] = (...args) => this.call('aggregate', args);
  stats: EventEngine['stats'] = (...args) => this.call('stats', args);
  rollupCounts: EventEngine['rollupCounts'] = (...args) => this.call('rollupCounts', args);
  fieldStats: EventEngine['fieldStats'] = (...args) => this.call('fieldStats', args);
  deleteBefore: EventEngine['deleteBefore'] = (...args) => this.call('deleteBefore', args);
  readAfter: EventEngine['readAfter'] = (...args) => this.call('readAfter', args);
  logPositions: EventEngine['logPositions'] = (...args) => this.call('logPositions', args);
  loadedPositions: EventEngine['loadedPositions'] = () => this.call('loadedPositions', []);
  existingIds: EventEngine['existingIds'] = (...args) => this.call('existingIds', args);
  setHotKeys: EventEngine['setHotKeys'] = (...args) => this.call('setHotKeys', args);
  hotLayouts: EventEngine['hotLayouts'] = (...args) => this.call('hotLayouts', args);
  backfillHotKeys: EventEngine['backfillHotKeys'] = (...args) => this.call('backfillHotKeys', args);
  ping: EventEngine['ping'] = () => this.call('ping', []);
}
