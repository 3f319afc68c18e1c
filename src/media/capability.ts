import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import { openBlobStore } from '../stores/blobs/open-blob-store.js';
import { registerMediaRoutes } from './routes/index.js';
import { registerDelivery } from './delivery.js';
import { MediaService } from './media-service.js';

export interface MediaCapability extends Capability {
  service: MediaService;
  purge(): ReturnType<MediaService['purge']>;
}

/** Uploads, list/get/delete and purge under /v1/media; the files on the delivery listener. */
export function openMedia({ ctx, ...deps }: { ctx: AppContext; log: Logger; urls: PublicUrls }): MediaCapability {
  const service = new MediaService(ctx, openBlobStore({ blobUrl: ctx.config.blobUrl, dataDir: ctx.config.dataDir }), deps.urls);
  let stopPurgeJob: (() => Promise<void>) | undefined;
  return {
    name: 'media',
    service,
    routes: (v1) => registerMediaRoutes(v1, ctx, service),
    delivery: (cdn) => registerDelivery(cdn, service),
    readiness: { blobs: () => service.blobs.ping() },
    start: () => {
      stopPurgeJob = startPurgeJob(ctx, service, deps.log);
    },
    stop: async () => stopPurgeJob?.(),
    close: async () => service.blobs.close?.(),
    purge: () => service.purge(),
  };
}

/**
 * The purge job: at start-up (sweeping orphaned temp files and the reservations of uploads
 * a crash interrupted) and every OPS_PURGE_INTERVAL_MS. Several servers may run it at once
 * (see MediaService.purge). A failed run (database briefly unreachable) is logged and retried
 * at the next interval.
 */
function startPurgeJob(ctx: AppContext, media: MediaService, log: Logger): () => Promise<void> {
  let running: Promise<unknown> = media.blobs
    .sweep(media.knownKeys)
    .then(() => media.reservations.reclaim(media.blobs))
    .catch((error: unknown) => log.error({ err: error }, 'media: start-up sweep failed; the purge job retries it at the next interval'));
  const run = () => {
    running = running
      .then(() => media.purge())
      .catch((error: unknown) => log.error({ err: error }, 'media: purge failed; it runs again at the next interval'));
  };
  const timer = setInterval(run, ctx.config.purgeIntervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
