import Fastify, { type FastifyInstance } from 'fastify';
import type { AppContext } from '../app/context.js';
import { maxHeaderSize } from 'node:http';
import { newId } from '../shared/ids.js';
import { listenerOptions } from '../http/server-limits.js';
import { fastifyLogging, type Logger } from '../kernel/logger.js';
import type { DeliveryRegistrar } from '../kernel/capability.js';
import { answer503WhileClosing, envelopeOptions, installErrorHandling } from '../errors/error-handler.js';

/**
 * The public delivery listener (OPS_CDN_PORT): its own origin, no authentication, no API
 * routes, so uploaded content never runs with the API's origin.
 */
export async function buildCdn(ctx: AppContext, logger: Logger, registrars: DeliveryRegistrar[]): Promise<FastifyInstance> {
  const cdn = Fastify({
    ...fastifyLogging(logger),
    genReqId: () => newId.request(),
    requestIdHeader: false,
    // Errors here are the API's envelope too (answer503WhileClosing replaces Fastify's own 503).
    return503OnClosing: false,
    ...envelopeOptions({ maxHeaderBytes: maxHeaderSize }),
    // Header, request, idle and keep-alive timeouts (OPS_*_TIMEOUT_MS).
    ...listenerOptions(ctx.config),
  });
  cdn.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  installErrorHandling(cdn, { bodyLimit: cdn.initialConfig.bodyLimit ?? 1024 * 1024, notFound: 'no file at this address' });
  answer503WhileClosing(cdn);
  cdn.get('/healthz', async () => ({ ok: true }));
  for (const register of registrars) await register(cdn);
  return cdn;
}
