import type { Config } from '../config/config.js';
import { createLogger, type Logger, type LoggerSettings } from '../kernel/logger.js';
import { PublicUrls } from '../kernel/public-urls.js';
import { openModules } from '../modules.js';
import { systemClock } from '../shared/clock.js';
import { loadSecretKey } from '../shared/secret-key.js';
import type { EventsRuntimeOptions } from '../events/runtime.js';
import { serveEventsNode } from '../engine/node/events-node.js';

export interface RunningEventsNode {
  /** What API processes set as OPS_EVENTS_URL. */
  url: string;
  log: Logger;
  close(): Promise<void>;
}

/**
 * An events node: the one process that owns the event store of an installation whose API runs
 * in several processes (`opsctl serve --workers N` starts one in its primary; `opsctl
 * events-node` runs one on its own host). It holds the write-ahead log and DuckDB under
 * OPS_DATA_DIR/events, runs events retention and the admin socket, and answers the API
 * processes (RemoteEventStore) on OPS_EVENTS_NODE_HOST:OPS_EVENTS_NODE_PORT.
 */
export async function startEventsNode(given: Config, options: { logger?: LoggerSettings | false; events?: EventsRuntimeOptions } = {}): Promise<RunningEventsNode> {
  // The node owns the store: an OPS_EVENTS_URL shared with the API processes' environment
  // names the node itself, never a store to forward to.
  const config: Config = { ...given, eventsUrl: undefined };
  const log = createLogger(options.logger ?? { level: config.logLevel }).child({ role: 'events-node' });
  // The table's modules of an events node (src/modules.ts): the context and the events capability.
  // Dataset names are the API processes' to resolve (from their metadata): the node answers ids.
  const modules = await openModules('events-node', { config, clock: systemClock, log, urls: new PublicUrls(config) }, { events: { ...options.events, names: async () => new Map() } });
  const events = modules.byName.events!;
  try {
    const server = await serveEventsNode(events.store, { ...config.eventsNode, secret: loadSecretKey(config.secretKey, config.dataDir), log, keepAliveTimeoutMs: config.keepAliveTimeoutMs });
    for (const opened of modules.all) opened.start?.();
    let closing: Promise<void> | undefined;
    return {
      url: server.url,
      log,
      close: () =>
        (closing ??= (async () => {
          await server.close();
          for (const opened of modules.all) await opened.stop?.();
          await modules.close();
        })()),
    };
  } catch (error) {
    await modules.close();
    throw error;
  }
}
