import type { Capability } from '../app/capabilities.js';
import type { AppContext } from '../app/context.js';
import { registerMediaRoutes } from './routes/index.js';
import { registerDelivery } from './delivery.js';
import { mediaOf } from './services.js';

/**
 * The purge job: at start-up (sweeping orphaned temp files and the reservations of uploads
 * a crash interrupted) and every OPS_PURGE_INTERVAL_MS. Several servers may run it at once
 * (see MediaService.purge).
 */
function startPurgeJob(ctx: AppContext): () => Promise<void> {
  const media = mediaOf(ctx);
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = running.then(() => media.purge()).catch(() => {
      // A failed run (database briefly unreachable) is retried at the next interval.
    });
  };
  running = media.blobs
    .sweep()
    .then(() => media.reservations.reclaim(media.blobs))
    .catch(() => 0);
  const timer = setInterval(run, ctx.config.purgeIntervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

export const mediaCapability: Capability = {
  name: 'media',
  routes: registerMediaRoutes,
  delivery: registerDelivery,
  background: startPurgeJob,
  readiness: (ctx) => mediaOf(ctx).blobs.ping(),
  purge: (ctx) => mediaOf(ctx).purge(),
};
