import type { AppContext } from '../app/context.js';
import type { Capability } from '../app/capability.js';
import type { Logger } from '../app/logger.js';
import type { PublicUrls } from '../app/public-urls.js';
import type { FilesRepo } from '../media/files-repo.js';
import { ChannelService } from './channel-service.js';
import { Outbox } from './outbox.js';
import { NotificationService } from './notification-service.js';
import { DeliveryWorker, defaultTimings, type WorkerTimings } from './delivery-worker.js';
import { guardedAgent } from './guarded-agent.js';
import { registerNotificationRoutes } from './routes/index.js';

export interface NotificationsCapability extends Capability {
  /** What monitors call: `notifications.enqueue(tenant, input)`. */
  notifications: NotificationService;
  channels: ChannelService;
}

/**
 * Channels, the notification outbox and its delivery worker (DECISIONS.md §18,
 * docs/notifications.md). Every API process runs a worker; they share the outbox through the
 * metadata store.
 */
export function openNotifications(ctx: AppContext, deps: { log: Logger; urls: PublicUrls; files: FilesRepo; timings?: Partial<WorkerTimings> }): NotificationsCapability {
  const { db } = ctx.metadata;
  const allowPrivate = ctx.config.webhookAllowPrivate;
  const channels = new ChannelService(db, ctx.clock, allowPrivate);
  const outbox = new Outbox(db);
  const notifications = new NotificationService(ctx.clock, channels, outbox, deps.files, deps.urls);
  const dispatcher = guardedAgent({ allowPrivate });
  const worker = new DeliveryWorker(outbox, dispatcher, ctx.clock, deps.log, { ...defaultTimings, ...deps.timings });
  notifications.onEnqueued = () => worker.wake();
  return {
    name: 'notifications',
    notifications,
    channels,
    routes: (v1) => registerNotificationRoutes(v1, ctx, channels, notifications),
    start: () => worker.start(),
    stop: () => worker.stop(),
    close: () => dispatcher.close(),
  };
}
