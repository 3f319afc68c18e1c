import type { Config } from '../config/config.js';
import type { Logger } from './logger.js';

/** At most this long between purges, whatever OPS_PURGE_INTERVAL_MS says (idempotency keys live 24 h, sessions idle out in 12 h). */
const maxPurgeIntervalMs = 60 * 60 * 1000;

/**
 * A capability's purge as a background job: at start, then every OPS_PURGE_INTERVAL_MS (at most
 * an hour apart), one run at a time; a failed run is logged and the next interval tries again.
 * `stop` waits for a run in progress.
 */
export function periodicPurge(ctx: { config: Pick<Config, 'purgeIntervalMs'> }, log: Logger, name: string, purge: () => Promise<unknown>): { start(): void; stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = running.then(purge).catch((error: unknown) => log.error({ err: error }, `${name}: purge failed; it runs again at the next interval`));
  };
  return {
    start: () => {
      run();
      timer = setInterval(run, Math.min(ctx.config.purgeIntervalMs, maxPurgeIntervalMs));
      timer.unref();
    },
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
