import Fastify from 'fastify';
import cors from '@fastify/cors';
import { openApiDocument, registerOpenApi } from '../http/openapi.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from './context.js';
import type { Api } from '../http/types.js';
import { answer503WhileClosing, envelopeOptions, installErrorHandling } from '../errors/error-handler.js';
import { fastifyLogging, type Logger } from '../kernel/logger.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import type { RouteRegistrar } from '../kernel/capability.js';
import { exactBodyValidation } from '../http/validation.js';
import { maxHeaderSize } from 'node:http';
import { ErrorBody } from '../http/schemas.js';
import { authPlugin } from '../auth/auth-plugin.js';
import { TokenLookup } from '../auth/token-lookup.js';
import { LocalRateLimiter, type RateLimiter } from '../auth/rate-limiter.js';
import { newId } from '../shared/ids.js';
import { listenerOptions } from '../http/server-limits.js';
import { type IdempotencyStore, idempotencyPlugin } from '../idempotency/index.js';

export interface ApiOptions {
  logger: Logger;
  /** The OpenAPI document's server address. */
  urls: PublicUrls;
  /** The /v1 routes of the capabilities (members, tokens, media, events, query…), in this order. */
  routes?: RouteRegistrar[];
  /** Routes outside /v1 (/healthz and /readyz, the dashboard's `/dashboard/…`), each registered in a plugin of its own. */
  root?: RouteRegistrar[];
  /** The per-token rate limit (the module table's `rateLimiter`: shared through Redis or in process); default in process. */
  rateLimiter?: RateLimiter;
  /** The remembered Idempotency-Keys (the idempotency capability's one store). */
  idempotency: IdempotencyStore;
  /** Compile each route's schemas when it first runs, not at start (src/http/validation.ts). */
  compileSchemasOnFirstUse?: boolean;
}

const jsonBodyLimit = 1024 * 1024;

export async function buildApi(ctx: AppContext, options: ApiOptions): Promise<Api> {
  const app = Fastify({
    // Tokens put in a URL by mistake (?token=…) are redacted from every logged URL and error
    // (the logger's serializers: createLogger).
    ...fastifyLogging(options.logger),
    genReqId: () => newId.request(),
    // Client-chosen request ids would let a caller forge log lines; ours are always fresh.
    requestIdHeader: false,
    bodyLimit: jsonBodyLimit,
    trustProxy: false,
    // Fastify's own 503 during shutdown is outside the envelope; answer503WhileClosing sends ours.
    return503OnClosing: false,
    // Malformed URLs, oversized headers, timeouts: the envelope too, from whatever layer.
    ...envelopeOptions({ maxHeaderBytes: maxHeaderSize }),
    schemaController: exactBodyValidation({ onFirstUse: options.compileSchemasOnFirstUse }),
    // Header, request, idle and keep-alive timeouts (OPS_*_TIMEOUT_MS).
    ...listenerOptions(ctx.config),
    // A body field the endpoint does not know is refused (400 naming it), not dropped without a
    // word: a misspelt `retention_dayz` must not answer 200 having changed nothing.
    ajv: { customOptions: { removeAdditional: false } },
    // A path segment may be a whole domain name, up to 253 characters (POST
    // …/sso/domains/{domain}/verify); past the router's default of 100 such a domain could be
    // saved but never verified. Each route's parameters keep their own schema bounds.
    routerOptions: { maxParamLength: 253 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // A callback hook: an async one costs every request a promise and a microtask turn.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  installErrorHandling(app, { bodyLimit: jsonBodyLimit });
  answer503WhileClosing(app);
  // JSON is the only body our JSON endpoints take; anything else is 415, not a validation error.
  app.removeContentTypeParser('text/plain');

  if (ctx.config.corsOrigins.length) {
    await app.register(cors, {
      origin: ctx.config.corsOrigins,
      exposedHeaders: ['X-Request-Id', 'X-Cache', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed'],
      allowedHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID', 'Content-Encoding', 'Idempotency-Key'],
      methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    });
  }

  app.addSchema(ErrorBody);
  // Runs before @fastify/swagger's own onRoute hook: documents each route's scope and errors.
  app.addHook('onRoute', (route) => {
    // One place, so no route can forget it: a JSON object body takes only the fields it declares.
    const body = route.schema?.body as { type?: unknown; additionalProperties?: unknown } | undefined;
    if (body?.type === 'object' && body.additionalProperties === undefined) {
      route.schema = { ...route.schema, body: { ...body, additionalProperties: false } };
    }
    const scope = route.config?.scope;
    if (!scope || !route.schema) return;
    route.schema = {
      ...route.schema,
      security: [{ bearerAuth: [] }],
      description: `${route.schema.description ?? ''}${route.schema.description ? '\n\n' : ''}Requires scope \`${scope}\`.`,
      response: { ...(route.schema.response as object), '4xx': { $ref: 'ErrorBody#' }, '5xx': { $ref: 'ErrorBody#' } },
    };
    (route.schema as Record<string, unknown>)['x-required-scope'] = scope;
  });

  await registerOpenApi(app);

  const tokens = new TokenLookup(
    ctx.metadata,
    ctx.clock,
    (error) => app.log.warn({ err: error }, 'could not record token use'),
    ctx.config.authCacheMs,
  );
  // Revocations and plan changes, by this process (delivered inside publish) or another (NATS).
  ctx.bus.subscribe('token.revoked', ({ tokenId }) => tokens.forget(tokenId));
  ctx.bus.subscribe('org.changed', ({ orgId }) => tokens.forgetOrg(orgId));
  const rateLimiter = options.rateLimiter ?? new LocalRateLimiter(ctx.config.rateLimitPerSecond, ctx.config.rateLimitBurst);
  await app.register(authPlugin, { tokens, rateLimiter });
  // Before the routes: it equips each route whose config asks for Idempotency-Key.
  await app.register(idempotencyPlugin, { store: options.idempotency });

  for (const register of options.root ?? []) await app.register(async (root: Api) => register(root));

  await app.register(
    async (v1: Api) => {
      // Read per request: the bound address is known only after listen (port 0 in tests).
      v1.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => openApiDocument(app, options.urls.api));
      for (const register of options.routes ?? []) await register(v1);
    },
    { prefix: '/v1' },
  );
  return app;
}
