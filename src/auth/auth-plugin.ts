import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { AppError, forbidden } from '../errors/app-error.js';
import type { AuthContext } from './auth-context.js';
import type { TokenLookup } from './token-lookup.js';
import type { RateDecision, RateLimiter } from './rate-limiter.js';
import type { Scope } from './scopes.js';
import { ownOnRequest } from '../http/route-hooks.js';
import { requestOrigin } from '../tenancy/origin.js';

export interface AuthPluginOptions {
  tokens: TokenLookup;
  rateLimiter: RateLimiter;
}

/**
 * Authenticates every route that declares a scope, before its body is read (so an
 * unauthenticated upload is refused without being received), then applies the rate limit.
 * A /v1 route without a scope and without `public: true` stops start-up: no route can
 * forget authentication.
 */
export const authPlugin = fp<AuthPluginOptions>(
  async (app: FastifyInstance, { tokens, rateLimiter }) => {
    /** Scope, once the rate limit admitted the request; the request's AuthContext once both pass. */
    const admit = (scope: Scope, request: FastifyRequest, reply: FastifyReply, auth: AuthContext, limit: RateDecision): void => {
      reply.header('RateLimit-Limit', rateLimiter.limit);
      reply.header('RateLimit-Remaining', limit.remaining);
      reply.header('RateLimit-Reset', limit.resetSeconds);
      if (!limit.allowed) {
        throw new AppError(
          'rate_limited',
          `too many requests for this token: ${rateLimiter.perSecond} per second are allowed, with bursts of ${rateLimiter.burst}; retry after ${limit.resetSeconds} s`,
          {},
          { 'Retry-After': String(limit.resetSeconds) },
        );
      }
      if (!auth.scopes.has(scope)) {
        throw forbidden(`token does not have the required scope ${scope}`, { required_scope: scope });
      }
      request.auth = withOrigin(auth, request);
    };

    // A callback hook: a cached token under the in-process limiter (nearly every request
    // without Redis) is admitted without a promise. The shared limiter answers with one that
    // settles within its bound and never rejects.
    const authenticate = (scope: Scope): onRequestHookHandler =>
      function authenticate(request, reply, done) {
        const decide = (auth: AuthContext, limit: RateDecision): void => {
          try {
            admit(scope, request, reply, auth, limit);
          } catch (error) {
            done(error as Error);
            return;
          }
          // Outside the try: what runs after the hook must not report its errors through it.
          done();
        };
        const pass = (auth: AuthContext): void => {
          let limit: RateDecision | Promise<RateDecision>;
          try {
            limit = rateLimiter.take(auth.tokenId);
          } catch (error) {
            done(error as Error);
            return;
          }
          if (limit instanceof Promise) limit.then((decided) => decide(auth, decided), done);
          else decide(auth, limit);
        };
        let found: AuthContext | Promise<AuthContext>;
        try {
          found = tokens.authenticate(request.headers.authorization);
        } catch (error) {
          done(error as Error);
          return;
        }
        if (found instanceof Promise) found.then(pass, done);
        else pass(found);
      };

    // The hook is attached to each route that declares a scope, as the route is added: public
    // routes carry no authentication step at all, and no request looks its scope up at run time.
    app.addHook('onRoute', (route) => {
      const scope = route.config?.scope;
      if (scope) {
        route.onRequest = [authenticate(scope), ...ownOnRequest(route)];
        return;
      }
      if (route.url.startsWith('/v1') && !route.config?.public) {
        throw new Error(`route ${route.method} ${route.url} declares no scope`);
      }
    });
  },
  { name: 'auth' },
);

/**
 * The cached AuthContext with this request's origin on its tenant (src/tenancy/origin.ts): who
 * acts, the request id, the client's address and user agent reach every service the tenant does.
 * Built field by field: a spread costs more on this path, which every request takes.
 */
function withOrigin(auth: AuthContext, request: FastifyRequest): AuthContext {
  const { tenant } = auth;
  const origin = { actor: auth.actor, ...requestOrigin(request) };
  return {
    tenant: { orgId: tenant.orgId, projectId: tenant.projectId, mode: tenant.mode, origin },
    tokenId: auth.tokenId,
    scopes: auth.scopes,
    plan: auth.plan,
    member: auth.member,
    actor: auth.actor,
  };
}

/** The request's AuthContext; only reachable on routes that declare a scope. */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('internal', 'an unexpected error occurred');
  return request.auth;
}
