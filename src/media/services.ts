import type { AppContext } from '../app/context.js';
import { openBlobStore } from '../stores/blobs/blob-store.js';
import { MediaService } from './media-service.js';

const services = new WeakMap<AppContext, MediaService>();

/**
 * The media service of a context, built on first use. Kept beside the context rather than
 * in it so the foundation's AppContext does not grow a field per capability.
 */
export function mediaOf(ctx: AppContext): MediaService {
  let service = services.get(ctx);
  if (!service) {
    service = new MediaService(ctx, openBlobStore({ blobUrl: ctx.config.blobUrl, dataDir: ctx.config.dataDir }));
    services.set(ctx, service);
  }
  return service;
}
