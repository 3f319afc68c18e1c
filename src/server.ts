import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config } from './config/config.js';
import { systemClock, type Clock } from './shared/clock.js';
import { createContext, type AppContext } from './app/context.js';
import type { Capability } from './app/capability.js';
import { createLogger, type LoggerSettings } from './app/logger.js';
import { PublicUrls } from './app/public-urls.js';
import { buildApi } from './app/build-api.js';
import { buildCdn } from './delivery/build-cdn.js';
import { openMedia, type MediaCapability } from './media/capability.js';
import { openEvents, type EventsCapability } from './events/capability.js';
import type { EventsRuntimeOptions } from './events/runtime.js';
import { openQuery } from './query/capability.js';
import { openTail, type TailCapability } from './tail/capability.js';
import { openIngest } from './ingest/capability.js';
import { openAnnounced } from './features/capability.js';
import { openIdempotency } from './idempotency/capability.js';
import { openDashboard } from './dashboard/capability.js';
import { openSso, type SsoOptions } from './sso/capability.js';
import { openNotifications, type NotificationsCapability } from './notifications/capability.js';
import type { WorkerTimings } from './notifications/delivery-worker.js';
import { openMonitors, type MonitorsCapability, type MonitorsOptions } from './monitors/capability.js';
import { openSearches } from './searches/capability.js';
import { openAudit } from './audit/capability.js';
import { openMembers } from './members/capability.js';
import { openTokens } from './tokens/capability.js';
import { openUsage } from './usage/capability.js';
import { openHealth } from './health/capability.js';
import type { Api } from './http/types.js';
import { limitConnections } from './http/server-limits.js';
import { openRateLimiter, type RateLimiter } from './auth/rate-limiter.js';
import type { Logger } from './app/logger.js';

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

export interface StartOptions {
  clock?: Clock;
  /** pino settings, or false for silence. */
  logger?: LoggerSettings | false;
  /** Event store settings (tests shrink its memory limit). */
  events?: EventsRuntimeOptions;
  /** The delivery worker's timings (tests shrink the 10 s timeout and the backoff). */
  notifications?: Partial<WorkerTimings>;
  /** The monitor scheduler's tick (tests call evaluateDue themselves). */
  monitors?: MonitorsOptions;
  /** How long a stopping listener waits for the answers in flight before it cuts their connections (default 10 s; tests shrink it). */
  drainMs?: number;
  /** Compile each route's schemas when it first runs, not at start (test servers: see src/http/validation.ts). */
  compileSchemasOnFirstUse?: boolean;
  /** Single sign-on: host names a test's loopback providers stand for public ones under (src/outbound/guarded-agent.ts). */
  sso?: SsoOptions;
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
  const ctx = await createContext(config, options.clock ?? systemClock, { log });
  const capabilities: Capability[] = [];
  const opened = <C extends Capability>(capability: C): C => {
    capabilities.push(capability);
    return capability;
  };
  let api: Api | undefined;
  let cdn: FastifyInstance | undefined;
  let rateLimiter: RateLimiter | undefined;
  const closeCapabilities = async () => {
    for (const capability of [...capabilities].reverse()) await capability.close?.();
  };
  try {
    // The shared stores between API processes (docs/cross-process.md), each waited for briefly
    // so the first requests already count in Redis and reach the other processes; an
    // unreachable one delays nothing, and the process degrades until it answers.
    [rateLimiter] = await Promise.all([openRateLimiter(config, log), ctx.bus.ready(2_000)]);
    // The wiring: each capability opened on what it uses, in the order their routes register.
    opened(openMembers(ctx));
    opened(openTokens(ctx));
    opened(openUsage(ctx));
    const media = opened(openMedia(ctx, { log, urls }));
    const events = opened(await openEvents(ctx, log, options.events));
    // Every ingest protocol, onto the events capability's datasets and store.
    opened(openIngest(ctx, events));
    opened(openQuery(ctx, events));
    // Ingest reaches live tail through the tail capability's relay (src/tail/relay.ts): each
    // durable append, or on ClickHouse each log record, goes to this process's feeds at once
    // and to the other API processes over the bus. A lost message only delays: each feed reads
    // from its own cursor and polls every OPS_TAIL_POLL_MS.
    const tail = opened(openTail(ctx, events, log));
    opened(openAnnounced(ctx, { events, urls }));
    const notifications = opened(openNotifications(ctx, { log, urls, files: media.service.files, timings: options.notifications }));
    const monitors = opened(openMonitors(ctx, { events, notifications, urls, log }, options.monitors));
    opened(openSearches(ctx));
    opened(openAudit(ctx, log));
    const idempotency = opened(openIdempotency(ctx, log));
    const sso = opened(openSso(ctx, log, urls, options.sso));
    opened(await openDashboard(ctx, log, urls, [sso.dashboardRoutes]));
    // Last: /readyz requires the stores of every capability opened before it.
    opened(openHealth(ctx, { readiness: () => Object.fromEntries(capabilities.flatMap((c) => Object.entries(c.readiness ?? {}))), rateLimiter }));

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
        await closeCapabilities();
        await rateLimiter!.close();
        await ctx.close();
      })());
    return { api, cdn, ctx, media, events, tail, notifications, monitors, rateLimiter, apiUrl, cdnUrl, close };
  } catch (error) {
    await api?.close();
    await cdn?.close();
    await closeCapabilities();
    await rateLimiter?.close();
    await ctx.close();
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
