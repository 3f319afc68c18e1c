import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import { periodicPurge } from '../kernel/periodic-purge.js';
import { IdempotencyStore } from './idempotency-store.js';

export interface IdempotencyCapability extends Capability {
  /** The server's one store: the API's Idempotency-Key plugin uses it (build-api.ts). */
  store: IdempotencyStore;
  purge(): Promise<{ purged: number }>;
}

/**
 * The purge of remembered Idempotency-Keys past their 24 hours: at start and every
 * OPS_PURGE_INTERVAL_MS (at most an hour apart), and in `opsctl purge`. Expired rows are never
 * answered from even before they are purged; the purge only keeps the table small.
 */
export function openIdempotency({ ctx, log }: { ctx: AppContext; log: Logger }): IdempotencyCapability {
  const store = new IdempotencyStore(ctx.metadata.db, ctx.clock);
  const purge = async () => ({ purged: await store.purge() });
  const job = periodicPurge(ctx, log, 'idempotency', purge);
  return {
    name: 'idempotency',
    store,
    purge,
    start: job.start,
    stop: job.stop,
  };
}
