import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config } from './config/config.js';
import { systemClock, type Clock } from './shared/clock.js';
import type { AppContext } from './app/context.js';
import { createLogger, type LoggerSettings } from './kernel/logger.js';
import { PublicUrls } from './kernel/public-urls.js';
import { buildApi } from './app/build-api.js';
import { openModules, type ModuleOptions } from './modules.js';
import { buildCdn } from './delivery/build-cdn.js';
import type { MediaCapability } from './media/capability.js';
import type { EventsCapability } from './events/capability.js';
import type { TailCapability } from './tail/capability.js';
import type { NotificationsCapability } from './notifications/capability.js';
import type { MonitorsCapability } from './monitors/capability.js';
import type { Api } from './http/types.js';
import { limitConnections } from './http/server-limits.js';
import type { RateLimiter } from './auth/rate-limiter.js';
import type { Logger } from './kernel/logger.js';

export interface RunningServer {
  api: Api;
  cdn: FastifyInstance;
  ctx: AppContext;
  /** The opened capabilities tests and benchmarks reach into (the event store, the tail hub…). */
  media: MediaCapability;
  events: EventsCapability;
  tail: TailCapability;
  /** Channels and the notification outbox: monitors call `notifications.notifications.enqueue`. */
  notifications: NotificationsCapability;
  /** Monitors: CRUD, the threshold scheduler, match monitors on the write path. */
  monitors: MonitorsCapability;
  /** The per-token rate limit: shared through Redis (OPS_REDIS_URL) or in process. */
  rateLimiter: RateLimiter;
  /** Addresses actually bound (port 0 picks a free one). */
  apiUrl: string;
  cdnUrl: string;
  close(): Promise<void>;
}

/** The modules' options (src/modules.ts: the event store's, the delivery worker's timings, the monitor scheduler's tick, single sign-on's), and the process's own. */
export interface StartOptions extends ModuleOptions {
  clock?: Clock;
  /** pino settings, or false for silence. */
  logger?: LoggerSettings | false;
  /** How long a stopping listener waits for the answers in flight before it cuts their connections (default 10 s; tests shrink it). */
  drainMs?: number;
  /** Compile each route's schemas when it first runs, not at start (test servers: see src/http/validation.ts). */
  compileSchemasOnFirstUse?: boolean;
}

const defaultDrainMs = 10_000;

/**
 * Closes a listener: idle keep-alive connections at once (Fastify's default), answers in flight
 * given `drainMs` (10 s) to finish. Without the bound, a client that stops reading a delivery (a
 * kept-alive download it never consumes) held the stop until the keep-alive timeout (72 s).
 */
async function closeListener(app: FastifyInstance | Api, drainMs: number): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), drainMs);
  cut.unref();
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}

/** Opens the stores and the capabilities, starts both listeners and the background jobs. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const log = createLogger(
    options.logger ?? {
      level: config.logLevel,
      // Tokens travel in this header; it is never written to the log, even at trace level.
      redact: ['req.headers.authorization', 'headers.authorization'],
    },
  );
  checkSecretKey(config, log);
  const urls = new PublicUrls(config);
  // Every module of an API process, each on what it needs, in the table's order (src/modules.ts).
  const modules = await openModules('api', { config, clock: options.clock ?? systemClock, log, urls }, options);
  const { ctx, rateLimiter, idempotency, media, events, tail, notifications, monitors } = modules.byName as Required<typeof modules.byName>;
  const capabilities = modules.all;
  let api: Api | undefined;
  let cdn: FastifyInstance | undefined;
  try {
    api = await buildApi(ctx, {
      logger: log,
      urls,
      routes: capabilities.flatMap((c) => (c.routes ? [c.routes] : [])),
      root: capabilities.flatMap((c) => (c.root ? [c.root] : [])),
      rateLimiter,
      idempotency: idempotency.store,
      compileSchemasOnFirstUse: options.compileSchemasOnFirstUse,
    });
    cdn = await buildCdn(ctx, log, capabilities.flatMap((c) => (c.delivery ? [c.delivery] : [])));
    limitConnections(api.server, config, api.log, 'api');
    limitConnections(cdn.server, config, cdn.log, 'cdn');
    ctx.metadata.onConnectionLost((error) => log.warn({ err: error }, 'a PostgreSQL connection was closed by the server; the pool opens a new one on next use'));
    const apiUrl = await api.listen({ port: config.port, host: config.host });
    const cdnUrl = await cdn.listen({ port: config.cdnPort, host: config.host });
    urls.bound({ api: apiUrl, cdn: cdnUrl });
    for (const capability of capabilities) capability.start?.();

    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        for (const capability of capabilities) await capability.stop?.();
        const drainMs = options.drainMs ?? defaultDrainMs;
        await Promise.all([closeListener(api!, drainMs), closeListener(cdn!, drainMs)]);
        // The capabilities, then the rate limiter and the context (the table's first modules).
        await modules.close();
      })());
    return { api, cdn, ctx, media, events, tail, notifications, monitors, rateLimiter, apiUrl, cdnUrl, close };
  } catch (error) {
    await api?.close();
    await cdn?.close();
    await modules.close();
    throw error;
  }
}

/**
 * Cursors are signed with OPS_SECRET_KEY; unset, each process makes one in its own data
 * directory, which only processes sharing that directory share. On PostgreSQL the metadata is
 * meant for several hosts: with OPS_REDIS_URL or OPS_NATS_URL also set (an installation of
 * several processes by its own account) start-up is refused, since a cursor from one host
 * would be refused by the next; on PostgreSQL alone it is a warning.
 */
function checkSecretKey(config: Config, log: Logger): void {
  if (config.secretKey || !config.databaseUrl) return;
  if (config.redisUrl || config.natsUrl) {
    throw new ConfigError(
      'OPS_SECRET_KEY',
      'is required with OPS_DATABASE_URL and OPS_REDIS_URL or OPS_NATS_URL (several API processes): each would otherwise sign cursors with a key of its own, and a cursor from one host would be refused by another',
    );
  }
  log.warn(
    'OPS_SECRET_KEY is unset on PostgreSQL: cursors are signed with a key generated into this host\'s OPS_DATA_DIR; set the same OPS_SECRET_KEY on every API host, or cursors from one are refused by another',
  );
}
