import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config/config.js';
import path from 'node:path';
import { changeBoardFile } from '../engine/change-board.js';
import { createLogger } from '../kernel/logger.js';

/**
 * `opsctl serve --workers N`: N API processes on one machine sharing its two ports (node:cluster
 * hands the listening sockets to the workers). The primary serves no request: it starts the
 * events node when the events live on this machine (no OPS_EVENTS_URL), since DuckDB and the
 * write-ahead log have one owner process, then keeps N workers running. On ClickHouse it starts
 * none: each worker is an ingester with a write-ahead log of its own (OPS_WORKER_INDEX names
 * its directory, runtime.ts's eventsDir), loading into ClickHouse itself. A worker that dies is
 * replaced (after 1 s, doubling to 30 s while they keep dying within a minute of starting).
 * SIGTERM / SIGINT stop the workers first, so they finish their requests, then the events node.
 *
 * Returns in the primary when everything has stopped; a worker returns false at once (it then
 * runs the single-process server like `opsctl serve`).
 */
export async function runWorkers(config: Config, count: number): Promise<boolean> {
  if (!cluster.isPrimary) return false;
  const log = createLogger({ level: config.logLevel }).child({ role: 'primary' });
  let node: { url: string; close(): Promise<void> } | undefined;
  const env: Record<string, string> = {};
  if (!config.eventsUrl && !config.eventsClickHouseUrl) {
    const { startEventsNode } = await import('./run-events-node.js');
    // Loopback and a free port: the node is this machine's workers' alone.
    node = await startEventsNode({ ...config, eventsNode: { host: '127.0.0.1', port: 0 } });
    env.OPS_EVENTS_URL = node.url;
    // The node's change counts, for the workers' caches (src/engine/change-board.ts).
    env.OPS_EVENTS_CHANGE_BOARD = changeBoardFile(path.join(config.dataDir, 'events'));
    log.info({ events: node.url }, 'events node started for the workers');
  }

  let stopping = false;
  const startedAt = new Map<Worker, number>();
  /** Each worker's index: a replacement takes the dead worker's, and with it its events directory. */
  const indexOf = new Map<Worker, number>();
  let restartDelayMs = 1_000;
  const fork = (index: number) => {
    const worker = cluster.fork({ ...env, OPS_WORKER_INDEX: String(index) });
    startedAt.set(worker, Date.now());
    indexOf.set(worker, index);
  };
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    const index = indexOf.get(worker) ?? 0;
    indexOf.delete(worker);
    if (stopping) return;
    restartDelayMs = lived > 60_000 ? 1_000 : Math.min(restartDelayMs * 2, 30_000);
    log.error({ pid: worker.process.pid, code, signal }, `a worker stopped; starting another in ${restartDelayMs / 1000} s`);
    setTimeout(() => {
      if (!stopping) fork(index);
    }, restartDelayMs).unref();
  });
  for (let i = 0; i < count; i++) fork(i);
  log.info({ workers: count, port: config.port, cdnPort: config.cdnPort }, 'opsplatform started with workers');

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down: stopping the workers');
      const living = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
      if (!living.length) return resolve();
      let left = living.length;
      for (const worker of living) {
        worker.once('exit', () => {
          if (--left === 0) resolve();
        });
        // SIGTERM whatever the primary got: a worker handles it (and a second signal) by closing once.
        worker.process.kill('SIGTERM');
      }
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await node?.close();
  log.info('stopped');
  return true;
}
