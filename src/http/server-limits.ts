import type { Server, ServerOptions } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config/config.js';

type Limits = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'idleTimeoutMs' | 'keepAliveTimeoutMs' | 'maxConnections'>;

/**
 * Fastify options that bound how long a connection may hold the server (both listeners).
 * - headersTimeoutMs / requestTimeoutMs: Node's own checks, answered through the instance's
 *   clientErrorHandler. Node runs them on a timer (30 s by default, so a timeout could be
 *   overrun by that much): here it runs at a quarter of the headers timeout, at most every second.
 * - idleTimeoutMs: the socket's inactivity timeout. It is what cuts a stalled upload (no byte
 *   for that long), while a slow one that keeps sending is never cut; the connection is
 *   destroyed, which ends the request stream and so gives back the upload's quota and temp file.
 * - keepAliveTimeoutMs: how long a connection may wait between requests.
 */
export function listenerOptions(limits: Limits): {
  connectionTimeout: number;
  keepAliveTimeout: number;
  requestTimeout: number;
  http: ServerOptions;
} {
  return {
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      // Also here, not only Fastify's own option: Node checks it against headersTimeout.
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    },
  };
}

/** How often refused connections are reported at most: a flood must not flood the log too. */
const dropReportMs = 10_000;

/**
 * At most `maxConnections` open connections on this listener: Node closes any further one as
 * soon as it is accepted (no answer; the client sees the connection closed or reset and may
 * retry), so a flood of idle or slow clients cannot exhaust memory and file descriptors.
 */
export function limitConnections(server: Server, limits: Pick<Config, 'maxConnections'>, log: FastifyBaseLogger, listener: string): void {
  server.maxConnections = limits.maxConnections;
  let dropped = 0;
  let reportedAt = 0;
  server.on('drop', () => {
    dropped++;
    const now = Date.now();
    if (now - reportedAt < dropReportMs) return;
    log.warn({ listener, dropped, max_connections: limits.maxConnections }, `connections refused: ${listener} is at OPS_MAX_CONNECTIONS (${limits.maxConnections})`);
    reportedAt = now;
    dropped = 0;
  });
}
