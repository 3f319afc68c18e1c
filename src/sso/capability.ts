import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import { dashboardService, type DashboardSso } from '../dashboard/capability.js';
import { periodicPurge } from '../kernel/periodic-purge.js';
import { SsoService } from './sso-service.js';
import { SsoStore } from './sso-store.js';
import { passwordSignInRefusal } from './enforce.js';
import { registerSsoConfigRoutes } from './routes/config-routes.js';
import { registerSsoSignInRoutes } from './routes/sign-in-routes.js';

export interface SsoCapability extends Capability, DashboardSso {
  readonly service: SsoService;
  purge(): Promise<{ sign_ins: number }>;
}

export interface SsoOptions {
  /** Host names a test's loopback providers stand for public ones under (src/outbound/guarded-agent.ts); never from configuration. */
  publicHostsForTests?: readonly string[];
}

/**
 * Single sign-on with OpenID Connect (DECISIONS.md §22, docs/sso.md): the configuration
 * endpoints under /v1, the sign-in under /dashboard/sso, and the purge of sign-ins abandoned
 * at the provider.
 */
export function openSso({ ctx, log, urls }: { ctx: AppContext; log: Logger; urls: PublicUrls }, options: SsoOptions = {}): SsoCapability {
  const service = new SsoService({
    db: ctx.metadata.db,
    clock: ctx.clock,
    orgs: ctx.orgs,
    members: ctx.members,
    dashboard: dashboardService(ctx),
    callbackUrl: () => `${urls.api}/dashboard/sso/callback`,
    outbound: { allowPrivate: ctx.config.outboundAllowPrivate, publicHostsForTests: options.publicHostsForTests },
    dnsServers: ctx.config.dnsServers,
  });
  const purge = async () => ({ sign_ins: await service.purge() });
  const job = periodicPurge(ctx, log, 'sso', purge);
  return {
    name: 'sso',
    service,
    routes: (v1) => registerSsoConfigRoutes(v1, service),
    // The sign-in routes the dashboard registers inside its own plugin (its headers, its Origin check).
    dashboardRoutes: (app, dashboard, secure) => registerSsoSignInRoutes(app, dashboard, service, secure),
    passwordSignInRefusal: (userId) => passwordSignInRefusal(ctx.metadata.db, userId),
    purge,
    start: job.start,
    stop: job.stop,
    close: () => service.close(),
  };
}

/** The sign-ins' purge where no server runs it (`opsctl purge`): straight on the store, no provider reached. */
export async function purgeSignIns(ctx: Pick<AppContext, 'metadata' | 'clock'>): Promise<{ sign_ins: number }> {
  return { sign_ins: await new SsoStore(ctx.metadata.db).purge(new Date(ctx.clock.now()).toISOString()) };
}
