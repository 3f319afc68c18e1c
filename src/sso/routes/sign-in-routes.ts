import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import type { DashboardService } from '../../dashboard/dashboard-service.js';
import { dashboardTimings } from '../../dashboard/dashboard-service.js';
import { readCookie, sessionCookieHeader } from '../../dashboard/cookies.js';
import { AppError } from '../../errors/app-error.js';
import { signInWindowMs, type SsoService } from '../sso-service.js';
import { requestOrigin } from '../../tenancy/origin.js';
import { ssoSignedIn } from '../../audit/sso.js';

/**
 * The flow cookie: binds a sign-in in flight to the browser that started it. SameSite=Lax, not
 * Strict like the session's: it must come back on the provider's redirect, a navigation from
 * another site. Only on /dashboard/sso, for the sign-in's ten minutes.
 */
export const flowCookie = 'ops_sso';

function flowCookieHeader(value: string, secure: boolean, maxAgeSeconds: number): string {
  return [`${flowCookie}=${value}`, 'Path=/dashboard/sso', 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : []), `Max-Age=${maxAgeSeconds}`].join('; ');
}

/**
 * The sign-in through the organisation's provider (DECISIONS.md §22), under /dashboard/ with
 * the dashboard's headers and Origin check (registered inside its plugin):
 * - POST /dashboard/sso/start {email} → {redirect_url}, and the flow cookie;
 * - GET /dashboard/sso/callback: the provider's answer. Signed in: the session cookie (the same
 *   as a password sign-in's) and a redirect to the dashboard. Refused: a redirect to the
 *   sign-in page with the reason in the fragment (never sent to a server, so never in a log).
 */
export function registerSsoSignInRoutes(app: Api, dashboard: DashboardService, sso: SsoService, secure: boolean): void {
  app.post(
    '/dashboard/sso/start',
    {
      schema: {
        hide: true,
        body: Type.Object({ email: Type.String({ minLength: 3, maxLength: 320 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ redirect_url: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { redirectUrl, browserSecret } = await sso.begin(request.body.email);
      reply.header('Set-Cookie', flowCookieHeader(browserSecret, secure, signInWindowMs / 1000));
      return { redirect_url: redirectUrl };
    },
  );

  app.get('/dashboard/sso/callback', { schema: { hide: true } }, async (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    const cleared = flowCookieHeader('', secure, 0);
    try {
      const user = await sso.complete(query, readCookie(request.headers.cookie, flowCookie), requestOrigin(request));
      const { secret } = await dashboard.startSession(user, ssoSignedIn(requestOrigin(request), user));
      request.log.info({ userId: user.id }, 'single sign-on: signed in');
      reply.header('Set-Cookie', [cleared, sessionCookieHeader(secret, { secure, maxAgeSeconds: dashboardTimings.absoluteMs / 1000 })]);
      return reply.redirect('/dashboard/', 303);
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      request.log.warn({ reason: error.message }, 'single sign-on: sign-in refused');
      reply.header('Set-Cookie', cleared);
      return reply.redirect(`/dashboard/sign-in#sso_error=${encodeURIComponent(error.message)}`, 303);
    }
  });
}
