import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';

/** Liveness and readiness, outside /v1 and without authentication (DECISIONS.md §2). */
export function registerHealthRoutes(app: Api, ctx: AppContext, readiness: Array<() => Promise<void>>): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await ctx.metadata.ping();
      for (const check of readiness) await check();
      return { ok: true };
    } catch (error) {
      reply.log.warn({ err: error }, 'readiness check failed');
      reply.header('Retry-After', '1');
      return reply.code(503).send({ ok: false });
    }
  });
}
