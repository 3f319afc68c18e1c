import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { PublicUrls } from '../kernel/public-urls.js';
import { registerWebApp } from './web-app.js';
import type { Api } from '../http/types.js';
import type { Config } from '../config/config.js';
import { AppError, forbidden, notFound } from '../errors/app-error.js';
import { DateTime, Ok } from '../http/schemas.js';
import { clearedSessionCookie, readCookie, sessionCookie, sessionCookieHeader } from './cookies.js';
import { maxPasswordLength, minPasswordLength } from './passwords.js';
import type { SessionRow } from './dashboard-store.js';
import { dashboardTimings, type DashboardService } from './dashboard-service.js';
import { registerPasswordLinkRoute } from './password-links.js';
import { requestOrigin } from '../tenancy/origin.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A /dashboard/ route that needs a signed-in session (the cookie). */
    dashboardSession?: boolean;
  }
  interface FastifyRequest {
    /** Set on dashboardSession routes once the cookie named a live session. */
    dashboardSession?: SessionRow;
  }
}

/**
 * Every response under /dashboard/ (docs/dashboard.md): no framing, no sniffing, no referrer.
 * Scripts, styles and API calls only from this origin; images and video also from the delivery
 * listener (media thumbnails and previews), whose origin is known once it is bound.
 */
function securityHeaders(cdnUrl: string): Record<string, string> {
  const cdn = cdnUrl ? ` ${new URL(cdnUrl).origin}` : '';
  return {
    'Content-Security-Policy': `default-src 'self'; img-src 'self' blob: data:${cdn}; media-src 'self'${cdn}; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'`,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  };
}

const unsafeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const Mode = Type.Union([Type.Literal('live'), Type.Literal('test')]);
const Target = Type.Object({
  org_id: Type.String({ minLength: 1, maxLength: 64 }),
  project_id: Type.String({ minLength: 1, maxLength: 64 }),
  mode: Mode,
});
const User = Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() });
const SessionInfo = Type.Object({
  user: User,
  memberships: Type.Array(
    Type.Object({
      org_id: Type.String(),
      org_name: Type.String(),
      role: Type.String(),
      projects: Type.Array(Type.Object({ project_id: Type.String(), name: Type.String() })),
    }),
  ),
  preferences: Type.Union([Target, Type.Null()]),
});

/**
 * DECISIONS.md §17, docs/dashboard.md: sign-in, sessions and their short-lived tokens, on the
 * API listener outside /v1. Unsafe methods need an Origin of this server; the routes marked
 * `dashboardSession` need the session cookie.
 */
export async function registerDashboardRoutes(
  app: Api,
  service: DashboardService,
  config: Pick<Config, 'publicUrl'>,
  urls: PublicUrls,
  more: ReadonlyArray<(app: Api, service: DashboardService, secure: boolean) => void> = [],
): Promise<void> {
  const secure = config.publicUrl.startsWith('https:');
  const publicOrigin = config.publicUrl ? new URL(config.publicUrl).origin : undefined;

  const sameOrigin = (request: FastifyRequest): boolean => {
    const origin = request.headers.origin;
    if (!origin) return false;
    if (origin === publicOrigin) return true;
    return origin === `${request.protocol}://${request.host}`;
  };

  app.addHook('onRequest', async (request, reply) => {
    reply.headers(securityHeaders(urls.cdn));
    if (unsafeMethods.has(request.method) && !sameOrigin(request)) {
      throw forbidden('cross-origin request refused: unsafe methods under /dashboard/ need an Origin header of this server');
    }
    if (request.routeOptions.config.dashboardSession) {
      try {
        request.dashboardSession = await service.authenticate(readCookie(request.headers.cookie, sessionCookie));
      } catch (error) {
        if (error instanceof AppError && error.code === 'unauthorized' && request.headers.cookie?.includes(`${sessionCookie}=`)) {
          reply.header('Set-Cookie', clearedSessionCookie(secure));
        }
        throw error;
      }
    }
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (String(reply.getHeader('content-type') ?? '').startsWith('application/json')) reply.header('Cache-Control', 'no-store');
    return payload;
  });

  const session = (request: FastifyRequest): SessionRow => {
    if (!request.dashboardSession) throw new AppError('internal', 'an unexpected error occurred');
    return request.dashboardSession;
  };
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/dashboard/', 302));
  app.get('/dashboard', { schema: { hide: true } }, (_request, reply) => reply.redirect('/dashboard/', 302));
  // The app's pages and assets; opsctl's links point at /dashboard/set-password (the link token
  // travels in the fragment, never to the server).
  await registerWebApp(app);

  // Unknown paths under /dashboard/ answer the usual 404, with this plugin's headers.
  app.all('/dashboard/*', { schema: { hide: true } }, async (request) => {
    throw notFound(`no endpoint ${request.method} ${request.url.split('?')[0]}`);
  });

  app.post(
    '/dashboard/password',
    {
      schema: {
        hide: true,
        body: Type.Object({
          link_token: Type.String({ minLength: 1, maxLength: 200 }),
          password: Type.String({ maxLength: maxPasswordLength * 4, description: `at least ${minPasswordLength} characters` }),
        }),
        response: { 200: Ok },
      },
    },
    async (request) => {
      await service.setPassword(request.body.link_token, request.body.password, requestOrigin(request));
      return { ok: true as const };
    },
  );

  // Whom a set-password link is for (its page names the e-mail); the link is not used. The
  // token travels in the body, like the fragment it came from: never in a URL the logs keep.
  app.post(
    '/dashboard/password/link',
    {
      schema: {
        hide: true,
        body: Type.Object({ link_token: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: Type.Object({ email: Type.Union([Type.String(), Type.Null()]) }) },
      },
    },
    async (request) => ({ email: (await service.passwordLinkEmail(request.body.link_token)) ?? null }),
  );

  app.post(
    '/dashboard/session',
    {
      schema: {
        hide: true,
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: maxPasswordLength * 4 }) }),
        response: { 200: Type.Object({ user: User }) },
      },
    },
    async (request, reply) => {
      const { user, secret } = await service.signIn(request.body.email, request.body.password, requestOrigin(request));
      // The browser may forget it at the absolute end; the server ends it then (or sooner, idle) anyway.
      reply.header('Set-Cookie', sessionCookieHeader(secret, { secure, maxAgeSeconds: dashboardTimings.absoluteMs / 1000 }));
      return { user };
    },
  );

  app.get(
    '/dashboard/session',
    { config: { dashboardSession: true }, schema: { hide: true, response: { 200: SessionInfo } } },
    async (request) => service.describe(session(request)),
  );

  // Who is signed in, for the app's first look: 200 with null when nobody is (not a 401, which
  // browsers log as a failed resource on every visit to sign-in). A stale cookie is cleared.
  app.get('/dashboard/session/current', { schema: { hide: true, response: { 200: Type.Object({ session: Type.Union([SessionInfo, Type.Null()]) }) } } }, async (request, reply) => {
    let row: SessionRow;
    try {
      row = await service.authenticate(readCookie(request.headers.cookie, sessionCookie));
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'unauthorized')) throw error;
      if (request.headers.cookie?.includes(`${sessionCookie}=`)) reply.header('Set-Cookie', clearedSessionCookie(secure));
      return { session: null };
    }
    return { session: await service.describe(row) };
  });

  app.delete('/dashboard/session', { config: { dashboardSession: true }, schema: { hide: true, response: { 200: Ok } } }, async (request, reply) => {
    await service.signOut(session(request));
    reply.header('Set-Cookie', clearedSessionCookie(secure));
    return { ok: true as const };
  });

  app.put(
    '/dashboard/session/preferences',
    { config: { dashboardSession: true }, schema: { hide: true, body: Target, response: { 200: Type.Object({ preferences: Target }) } } },
    async (request) => ({ preferences: await service.setPreferences(session(request), request.body) }),
  );

  app.post(
    '/dashboard/session/token',
    {
      config: { dashboardSession: true },
      schema: {
        hide: true,
        body: Target,
        response: {
          200: Type.Object({
            token: Type.String(),
            token_id: Type.String(),
            org_id: Type.String(),
            project_id: Type.String(),
            mode: Mode,
            expires_at: DateTime(),
            scopes: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (request) => ({ ...(await service.exchange(session(request), request.body)), ...request.body }),
  );

  // An Owner's or Admin's one-time set-password link for a member (password-links.ts).
  registerPasswordLinkRoute(app, service, config.publicUrl || undefined);
  // Other capabilities' routes under /dashboard/ (single sign-on), with this plugin's hooks.
  for (const register of more) register(app, service, secure);
}
