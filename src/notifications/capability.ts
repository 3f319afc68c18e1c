import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import type { FilesRepo } from '../media/files-repo.js';
import { ChannelService } from './channel-service.js';
import { Outbox } from './outbox.js';
import { NotificationService } from './notification-service.js';
import type { Dispatcher } from 'undici';
import { DeliveryWorker, defaultTimings, type Send, type WorkerTimings } from './delivery-worker.js';
import type { postOnce as PostOnce } from './send.js';
import { registerNotificationRoutes } from './routes/index.js';
import { periodicPurge } from '../kernel/periodic-purge.js';
import { iso } from '../shared/clock.js';

/** How long a delivered or failed notification stays listable with its attempts. */
export const historyDays = 30;

export interface NotificationsCapability extends Capability {
  /** What monitors call: `notifications.enqueue(tenant, input)`. */
  notifications: NotificationService;
  channels: ChannelService;
  purge(): Promise<{ notifications_purged: number }>;
}

/**
 * Channels, the notification outbox and its delivery worker (DECISIONS.md §18,
 * docs/notifications.md). Every API process runs a worker; they share the outbox through the
 * metadata store.
 */
export function openNotifications({ ctx, ...deps }: { ctx: AppContext; log: Logger; urls: PublicUrls; files: FilesRepo }, timings: Partial<WorkerTimings> = {}): NotificationsCapability {
  const { db } = ctx.metadata;
  const allowPrivate = ctx.config.outboundAllowPrivate;
  const channels = new ChannelService(db, ctx.clock, allowPrivate);
  const outbox = new Outbox(db);
  const notifications = new NotificationService(ctx.clock, channels, outbox, deps.files, deps.urls);
  // undici (about 1 MB of code) is loaded with the first notification sent, not at start.
  let transport: Promise<{ dispatcher: Dispatcher; postOnce: typeof PostOnce }> | undefined;
  const send: Send = async (target, timeoutMs, stopping) => {
    transport ??= Promise.all([import('../outbound/guarded-agent.js'), import('./send.js')]).then(([agent, sender]) => ({ dispatcher: agent.guardedAgent({ allowPrivate }), postOnce: sender.postOnce }));
    const { dispatcher, postOnce } = await transport;
    return postOnce(dispatcher, target, timeoutMs, stopping);
  };
  const worker = new DeliveryWorker(outbox, send, ctx.clock, deps.log, { ...defaultTimings, ...timings });
  notifications.onEnqueued = () => worker.wake();
  const purge = () => purgeNotificationHistory(ctx);
  const purgeJob = periodicPurge(ctx, deps.log, 'notifications', purge);
  return {
    name: 'notifications',
    notifications,
    channels,
    routes: (v1) => registerNotificationRoutes(v1, ctx, channels, notifications),
    start: () => {
      worker.start();
      purgeJob.start();
    },
    stop: async () => {
      await worker.stop();
      await purgeJob.stop();
    },
    purge,
    close: async () => {
      if (transport) await (await transport).dispatcher.close();
    },
  };
}

/** The notifications' purge (the server's background job and `opsctl purge`): history older than historyDays. */
export async function purgeNotificationHistory(ctx: Pick<AppContext, 'metadata' | 'clock'>): Promise<{ notifications_purged: number }> {
  return { notifications_purged: await new Outbox(ctx.metadata.db).purgeFinished(iso(ctx.clock.now() - historyDays * 86_400_000)) };
}
