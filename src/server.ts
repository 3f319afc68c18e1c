import type { FastifyInstance } from 'fastify';
import type { Config } from './config/config.js';
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
import { openAnnounced } from './features/capability.js';
import type { Api } from './http/types.js';
import { limitConnections } from './http/server-limits.js';

export interface RunningServer {
  api: Api;
  cdn: FastifyInstance;
  ctx: AppContext;
  /** The opened capabilities tests and benchmarks reach into (the event store, the tail hub…). */
  media: MediaCapability;
  events: EventsCapability;
  tail: TailCapability;
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
  const urls = new PublicUrls(config);
  const ctx = await createContext(config, options.clock ?? systemClock);
  const capabilities: Capability[] = [];
  const opened = <C extends Capability>(capability: C): C => {
    capabilities.push(capability);
    return capability;
  };
  let api: Api | undefined;
  let cdn: FastifyInstance | undefined;
  const closeCapabilities = async () => {
    for (const capability of [...capabilities].reverse()) await capability.close?.();
  };
  try {
    // The wiring: each capability opened on what it uses, in the order their routes register.
    const media = opened(openMedia(ctx, { log, urls }));
    const events = opened(await openEvents(ctx, log, options.events));
    opened(openQuery(ctx, events));
    const tail = opened(openTail(ctx, events, log));
    // Ingest in this process wakes live tail at once (its poll finds other processes' events).
    events.onAppended((tenant) => tail.wake(tenant));
    opened(openAnnounced(ctx, { events, urls }));

    api = await buildApi(ctx, {
      logger: log,
      urls,
      routes: capabilities.flatMap((c) => (c.routes ? [c.routes] : [])),
      readiness: capabilities.flatMap((c) => (c.readiness ? [c.readiness] : [])),
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
        await Promise.all([api!.close(), cdn!.close()]);
        await closeCapabilities();
        await ctx.close();
      })());
    return { api, cdn, ctx, media, events, tail, apiUrl, cdnUrl, close };
  } catch (error) {
    await api?.close();
    await cdn?.close();
    await closeCapabilities();
    await ctx.close();
    throw error;
  }
}
