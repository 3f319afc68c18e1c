import type { AppContext } from '../app/context.js';
import type { Capability } from '../app/capability.js';
import type { Logger } from '../app/logger.js';
import { IdempotencyStore } from './idempotency-store.js';

export interface IdempotencyCapability extends Capability {
  purge(): Promise<{ purged: number }>;
}

/** At most this long between purges, whatever OPS_PURGE_INTERVAL_MS says: rows are kept 24 hours. */
const maxPurgeIntervalMs = 60 * 60 * 1000;

/**
 * The purge of remembered Idempotency-Keys past their 24 hours: at start and every
 * OPS_PURGE_INTERVAL_MS (at most an hour apart), and in `opsctl purge`. Expired rows are never
 * answered from even before they are purged; the purge only keeps the table small.
 */
export function openIdempotency(ctx: AppContext, log: Logger): IdempotencyCapability {
  const store = new IdempotencyStore(ctx.metadata.db, ctx.clock);
  const purge = async () => ({ purged: await store.purge() });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = running.then(purge).catch((error: unknown) => log.error({ err: error }, 'idempotency: purge failed; it runs again at the next interval'));
  };
  return {
    name: 'idempotency',
    purge,
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
