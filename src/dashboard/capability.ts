import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { RouteRegistrar } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import type { Api } from '../http/types.js';
import { periodicPurge } from '../kernel/periodic-purge.js';
import { DashboardService, type PasswordSignInRefusal } from './dashboard-service.js';
import { registerDashboardRoutes } from './routes.js';
import { memorySignInLimiters, type SignInLimiters } from './sign-in-limiters.js';

/** Another capability's routes under /dashboard/ (single sign-on's), registered with the dashboard's hooks. */
export type DashboardRouteRegistrar = (app: Api, service: DashboardService, secure: boolean) => void;

export interface DashboardCapability extends Capability {
  /** Its routes on the API listener outside /v1 (`/`, `/dashboard/…`). */
  readonly root: RouteRegistrar;
  readonly service: DashboardService;
  purge(): Promise<{ sessions: number; links: number; tokens: number }>;
}


/**
 * What single sign-on gives the dashboard it is built on: its sign-in routes, registered with the
 * dashboard's hooks, and the check that refuses a password sign-in where an organisation
 * enforces single sign-on.
 */
export interface DashboardSso {
  readonly dashboardRoutes: DashboardRouteRegistrar;
  readonly passwordSignInRefusal: PasswordSignInRefusal;
}

/** The dashboard's service on a context (opsctl's links, the server's routes). */
export const dashboardService = (ctx: AppContext, signInLimiters?: SignInLimiters, passwordSignInRefusal?: PasswordSignInRefusal): DashboardService =>
  new DashboardService({ db: ctx.metadata.db, clock: ctx.clock, tokens: ctx.tokens, bus: ctx.bus, signInLimiters, passwordSignInRefusal });

/**
 * The web dashboard's sign-in and sessions (DECISIONS.md §17, docs/dashboard.md): its routes,
 * the end of the session tokens of a member whose role changed or who was removed, and the
 * purge of expired sessions, used or expired links and spent session tokens (at start, every
 * OPS_PURGE_INTERVAL_MS at most an hour apart, and in `opsctl purge`). Expired rows are refused
 * before they are purged.
 */
export async function openDashboard({ ctx, log, urls, sso }: { ctx: AppContext; log: Logger; urls: PublicUrls; sso: DashboardSso }): Promise<DashboardCapability> {
  // Sign-in attempts are counted where every API process sees them: Redis when configured (its
  // client loaded only then).
  const limiters = ctx.config.redisUrl
    ? (await import('./redis-sign-in-limiters.js')).redisSignInLimiters(ctx.config.redisUrl, log)
    : memorySignInLimiters();
  const service = dashboardService(ctx, limiters, sso.passwordSignInRefusal);
  ctx.members.onChanged(async (orgId, userId) => {
    try {
      await service.membershipChanged(orgId, userId);
    } catch (error) {
      log.error({ err: error, orgId, userId }, 'dashboard: could not end the session tokens of a member whose role changed or who was removed; they expire within 15 minutes');
    }
  });
  const purge = () => service.purge();
  const job = periodicPurge(ctx, log, 'dashboard', purge);
  return {
    name: 'dashboard',
    service,
    root: (app) => registerDashboardRoutes(app, service, ctx.config, urls, [sso.dashboardRoutes]),
    purge,
    start: job.start,
    stop: job.stop,
    close: limiters.close,
  };
}
