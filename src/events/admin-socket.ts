import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AppContext } from '../app/context.js';
import type { Logger } from '../kernel/logger.js';
import { AppError } from '../errors/app-error.js';
import { EventStoreLockedError } from '../engine/event-store.js';
import { openEventsRuntime, type EventsRuntime } from './runtime.js';
import { runRetention, type RetentionResult } from './retention.js';

/**
 * DuckDB allows one writing process. opsctl commands that touch events ask the running server
 * through this unix socket under OPS_DATA_DIR (mode 0600: only the installation's user).
 */
export const adminSocketPath = (ctx: AppContext) => path.join(ctx.config.dataDir, 'events-admin.sock');

/** Serves the socket for the server's runtime; resolves to the function that stops it. */
export async function startAdminSocket(ctx: AppContext, runtime: EventsRuntime, log: Logger): Promise<() => Promise<void>> {
  const socketPath = adminSocketPath(ctx);
  const server = http.createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'POST' || request.url !== '/retention') return reply(404, { error: 'unknown admin operation' });
    runRetention(ctx, runtime).then(
      (result) => reply(200, result),
      (error: unknown) => {
        log.error({ err: error }, 'events: retention asked through the admin socket failed');
        reply(500, { error: (error as Error).message });
      },
    );
  });
  // A socket file left by a server that was killed: nobody listens on it any more.
  fs.rmSync(socketPath, { force: true });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    fs.chmodSync(socketPath, 0o600);
  } catch (error) {
    log.warn({ err: error }, `events: admin socket ${socketPath} unavailable; opsctl purge cannot reach this server`);
    return async () => undefined;
  }
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}

function askServer(socketPath: string): Promise<RetentionResult | undefined> {
  return new Promise((resolve, reject) => {
    const request = http.request({ socketPath, path: '/retention', method: 'POST' }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        if (response.statusCode === 200) resolve(JSON.parse(text) as RetentionResult);
        else reject(new AppError('storage_error', `the running server could not run retention: ${text}`));
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') resolve(undefined);
      else reject(error);
    });
    request.end();
  });
}

/** Retention from opsctl: through the running server, else on the event store directly. */
export async function retentionFromCli(ctx: AppContext, log: Logger): Promise<RetentionResult & { via: 'server' | 'direct' }> {
  const viaServer = await askServer(adminSocketPath(ctx));
  if (viaServer) return { ...viaServer, via: 'server' };
  let runtime;
  try {
    runtime = await openEventsRuntime(ctx, log);
  } catch (error) {
    if (error instanceof EventStoreLockedError) {
      throw new AppError(
        'storage_error',
        `the event store under ${ctx.config.dataDir} is held by another process that does not answer on ${adminSocketPath(ctx)}; ` +
          'run opsctl on the host of the running server (same OPS_DATA_DIR), or stop that process and retry',
      );
    }
    throw error;
  }
  try {
    return { ...(await runRetention(ctx, runtime)), via: 'direct' };
  } finally {
    await runtime.store.close();
  }
}
