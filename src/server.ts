import type { FastifyInstance } from 'fastify';
import type { Config } from './config/config.js';
import { systemClock, type Clock } from './shared/clock.js';
import { createContext, type AppContext } from './app/context.js';
import { buildApi } from './app/build-api.js';
import { buildCdn } from './delivery/build-cdn.js';
import { capabilities } from './app/capabilities.js';
import type { Api } from './http/types.js';
import { limitConnections } from './http/server-limits.js';

export interface RunningServer {
  api: Api;
  cdn: FastifyInstance;
  ctx: AppContext;
  /** Addresses actually bound (port 0 picks a free one). */
  apiUrl: string;
  cdnUrl: string;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  /** pino options, or false for silence (tests). */
  logger?: boolean | object;
}

/** Opens the stores, starts both listeners and the background jobs. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger =
    options.logger ?? {
      level: config.logLevel,
      // Tokens travel in this header; it is never written to the log, even at trace level.
      redact: ['req.headers.authorization', 'headers.authorization'],
    };
  const ctx = await createContext(config, clock, 'server');
  let api: Api | undefined;
  let cdn: FastifyInstance | undefined;
  const stops: Array<() => Promise<void>> = [];
  try {
    api = await buildApi(ctx, {
      logger,
      capabilities: capabilities.flatMap((c) => (c.routes ? [c.routes] : [])),
      readiness: capabilities.flatMap((c) => (c.readiness ? [() => c.readiness!(ctx)] : [])),
    });
    cdn = await buildCdn(ctx, logger, capabilities.flatMap((c) => (c.delivery ? [c.delivery] : [])));
    limitConnections(api.server, config, api.log, 'api');
    limitConnections(cdn.server, config, cdn.log, 'cdn');
    const log = api.log;
    ctx.metadata.onConnectionLost((error) => log.warn({ err: error }, 'a PostgreSQL connection was closed by the server; the pool opens a new one on next use'));
    const apiUrl = await api.listen({ port: config.port, host: config.host });
    const cdnUrl = await cdn.listen({ port: config.cdnPort, host: config.host });
    if (!config.publicUrl) config.publicUrl = apiUrl;
    if (!config.cdnUrl) config.cdnUrl = cdnUrl;
    for (const capability of capabilities) if (capability.background) stops.push(capability.background(ctx));
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        for (const stop of stops) await stop();
        await Promise.all([api!.close(), cdn!.close()]);
        await ctx.close();
      })());
    return { api, cdn, ctx, apiUrl, cdnUrl, close };
  } catch (error) {
    await api?.close();
    await cdn?.close();
    await ctx.close();
    throw error;
  }
}
