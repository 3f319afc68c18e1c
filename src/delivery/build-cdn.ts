import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { AppContext } from '../app/context.js';
import { newId } from '../shared/ids.js';

/** A capability that serves public content on the delivery listener. */
export type DeliveryRegistrar = (cdn: FastifyInstance, ctx: AppContext) => void | Promise<void>;

/**
 * The public delivery listener (OPS_CDN_PORT): its own origin, no authentication, no API
 * routes, so uploaded content never runs with the API's origin.
 */
export async function buildCdn(ctx: AppContext, logger: FastifyServerOptions['logger'], registrars: DeliveryRegistrar[]): Promise<FastifyInstance> {
  const cdn = Fastify({ logger, genReqId: () => newId.request(), requestIdHeader: false, return503OnClosing: true });
  cdn.get('/healthz', async () => ({ ok: true }));
  for (const register of registrars) await register(cdn, ctx);
  cdn.setNotFoundHandler((_request, reply) => reply.code(404).type('text/plain; charset=utf-8').send('not found'));
  return cdn;
}
