import type { Config } from './config/config.js';
import type { Clock } from './shared/clock.js';
import type { Capability, Readiness } from './kernel/capability.js';
import type { Logger } from './kernel/logger.js';
import type { PublicUrls } from './kernel/public-urls.js';
import { createContext, type AppContext } from './app/context.js';
import { openRateLimiter } from './auth/open-rate-limiter.js';
import type { RateLimiter } from './auth/rate-limiter.js';
import { openMembers } from './members/capability.js';
import { openTokens } from './tokens/capability.js';
import { openUsage } from './usage/capability.js';
import { openMedia, type MediaCapability } from './media/capability.js';
import { openEvents, type EventsCapability } from './events/capability.js';
import type { EventsRuntimeOptions } from './events/runtime.js';
import { retentionFromCli } from './events/admin-socket.js';
import { openIngest } from './ingest/capability.js';
import { openQuery } from './query/capability.js';
import { openTail, type TailCapability } from './tail/capability.js';
import { openLogs } from './logs/capability.js';
import { openCases } from './cases/capability.js';
import { openApps } from './apps/capability.js';
import { openNotifications, purgeNotificationHistory, type NotificationsCapability } from './notifications/capability.js';
import type { WorkerTimings } from './notifications/delivery-worker.js';
import { openMonitors, type MonitorsCapability, type MonitorsOptions } from './monitors/capability.js';
import { openSearches, type SearchesCapability } from './searches/capability.js';
import { openAudit, purgeAudit, type AuditCapability } from './audit/capability.js';
import { openIdempotency, type IdempotencyCapability } from './idempotency/capability.js';
import { openSso, purgeSignIns, type SsoCapability, type SsoOptions } from './sso/capability.js';
import { openDashboard, dashboardService, type DashboardCapability } from './dashboard/capability.js';
import { openHealth } from './health/capability.js';

/** The processes built from the table: an API process (`opsctl serve`, each worker of `--workers`) and an events node. */
export type Process = 'api' | 'events-node';

/** What every process has before it opens any module: the kernel below the capabilities. */
export interface Kernel {
  config: Config;
  clock: Clock;
  log: Logger;
  urls: PublicUrls;
  /** The modules this process opened before the one being opened, in order (what /readyz checks). */
  before: readonly Opened[];
}

/** The parts of an opened module its process uses: a capability's, or a foundation piece's close. */
export type Opened = Omit<Capability, 'name'>;

/** What each module opens to: the value handed to the modules that name it in `needs`. */
export interface Modules {
  ctx: AppContext;
  rateLimiter: RateLimiter;
  members: Capability;
  tokens: Capability;
  usage: Capability;
  media: MediaCapability;
  events: EventsCapability;
  ingest: Capability;
  query: Capability;
  tail: TailCapability;
  logs: Capability;
  cases: Capability;
  apps: Capability;
  notifications: NotificationsCapability;
  monitors: MonitorsCapability;
  searches: SearchesCapability;
  audit: AuditCapability;
  idempotency: IdempotencyCapability;
  sso: SsoCapability;
  dashboard: DashboardCapability;
  health: Capability;
}

export type ModuleName = keyof Modules;

/** The one options object every module's open takes (each reads its own field; tests shrink timings). */
export interface ModuleOptions {
  /** Event store settings (tests shrink its memory limit; the events node answers ids, not names). */
  events?: EventsRuntimeOptions;
  /** The delivery worker's timings (tests shrink the 10 s timeout and the backoff). */
  notifications?: Partial<WorkerTimings>;
  /** The monitor scheduler's tick (tests call evaluateDue themselves). */
  monitors?: MonitorsOptions;
  /** Single sign-on: host names a test's loopback providers stand for public ones under (src/outbound/guarded-agent.ts). */
  sso?: SsoOptions;
}

export type Deps<K extends ModuleName> = Kernel & Pick<Modules, K>;

/** What a module's purge outside the server is given: the kernel and opsctl's context. */
export type PurgeDeps = Omit<Kernel, 'before'> & Pick<Modules, 'ctx'>;

export interface Module<N extends ModuleName = ModuleName, K extends ModuleName = ModuleName> {
  readonly name: N;
  /** The modules it is opened on; each comes earlier in the table. */
  readonly needs: readonly K[];
  /** The processes that open it. */
  readonly in: readonly Process[];
  /** One signature for every module. */
  open(deps: Deps<K>, options: ModuleOptions): Modules[N] | Promise<Modules[N]>;
  /** Its purge where no server runs it, without opening it (`opsctl purge`, on opsctl's context); the result is its share. */
  readonly purge?: (deps: PurgeDeps) => Promise<object>;
}

const module = <N extends ModuleName, K extends ModuleName>(m: Module<N, K>): Module<N, K> => m;

const api: readonly Process[] = ['api'];

/**
 * Every module of every process, with what it needs, in the order they are opened: the
 * foundation first (the context: metadata, cursors, bus, plans and quotas, organisations,
 * members and tokens; then the rate limiter), then the capabilities in the order their routes
 * register, health last (/readyz requires the stores of every module before it). Processes
 * close them in the reverse order.
 */
export const modules: readonly Module[] = [
  module({ name: 'ctx', needs: [], in: ['api', 'events-node'], open: ({ config, clock, log }) => createContext(config, clock, { log }) }),
  module({
    name: 'rateLimiter',
    needs: ['ctx'],
    in: api,
    // The shared stores between API processes (docs/cross-process.md), each waited for briefly
    // so the first requests already count in Redis and reach the other processes; an
    // unreachable one delays nothing, and the process degrades until it answers.
    open: async ({ config, log, ctx }) => (await Promise.all([openRateLimiter(config, log), ctx.bus.ready(2_000)]))[0],
  }),
  module({ name: 'members', needs: ['ctx'], in: api, open: openMembers }),
  module({ name: 'tokens', needs: ['ctx'], in: api, open: openTokens }),
  module({ name: 'usage', needs: ['ctx'], in: api, open: openUsage }),
  module({ name: 'media', needs: ['ctx'], in: api, open: openMedia, purge: (deps) => openMedia(deps).purge() }),
  // Events are never opened by opsctl: the event store is the running server's (DuckDB allows
  // one process), so its purge goes through the admin socket, or opens the store when none runs.
  module({ name: 'events', needs: ['ctx'], in: ['api', 'events-node'], open: (deps, o) => openEvents(deps, o.events), purge: ({ ctx, log }) => retentionFromCli(ctx, log) }),
  // Every ingest protocol, onto the events capability's datasets and store.
  module({ name: 'ingest', needs: ['ctx', 'events'], in: api, open: openIngest }),
  module({ name: 'query', needs: ['ctx', 'events'], in: api, open: openQuery }),
  // Ingest reaches live tail through the tail capability's relay (src/tail/relay.ts): each
  // durable append, or on ClickHouse each log record, goes to this process's feeds at once
  // and to the other API processes over the bus. A lost message only delays: each feed reads
  // from its own cursor and polls every OPS_TAIL_POLL_MS.
  module({ name: 'tail', needs: ['ctx', 'events'], in: api, open: openTail }),
  module({ name: 'logs', needs: ['ctx', 'events'], in: api, open: openLogs }),
  module({ name: 'cases', needs: ['ctx', 'media'], in: api, open: openCases }),
  module({ name: 'apps', needs: ['ctx'], in: api, open: openApps }),
  module({
    name: 'notifications',
    needs: ['ctx', 'media'],
    in: api,
    open: (deps, o) => openNotifications({ ...deps, files: deps.media.service.files }, o.notifications),
    purge: ({ ctx }) => purgeNotificationHistory(ctx),
  }),
  module({ name: 'monitors', needs: ['ctx', 'events', 'notifications'], in: api, open: (deps, o) => openMonitors(deps, o.monitors) }),
  module({ name: 'searches', needs: ['ctx'], in: api, open: openSearches }),
  module({ name: 'audit', needs: ['ctx'], in: api, open: openAudit, purge: ({ ctx }) => purgeAudit(ctx) }),
  module({ name: 'idempotency', needs: ['ctx'], in: api, open: openIdempotency, purge: (deps) => openIdempotency(deps).purge() }),
  module({ name: 'sso', needs: ['ctx'], in: api, open: (deps, o) => openSso(deps, o.sso), purge: ({ ctx }) => purgeSignIns(ctx) }),
  module({ name: 'dashboard', needs: ['ctx', 'sso'], in: api, open: openDashboard, purge: ({ ctx }) => dashboardService(ctx).purge() }),
  module({ name: 'health', needs: ['ctx', 'rateLimiter'], in: api, open: (deps) => openHealth({ ...deps, readiness: () => readinessOf(deps.before) }) }),
];

/** The stores' checks of the modules opened before: /readyz requires each. */
function readinessOf(opened: readonly Opened[]): Readiness {
  return Object.fromEntries(opened.flatMap((m) => Object.entries(m.readiness ?? {})));
}

/** A process's opened modules: each by name, and all in opening order (for the lifecycle). */
export interface OpenedModules {
  readonly byName: Partial<Modules>;
  readonly all: readonly Opened[];
  /** Closes what was opened, in the reverse order. */
  close(): Promise<void>;
}

/**
 * Opens the table's modules of `process` in order, each on the ones it needs. If one fails,
 * those opened before it are closed and the error is thrown.
 */
export async function openModules(process: Process, kernel: Omit<Kernel, 'before'>, options: ModuleOptions = {}): Promise<OpenedModules> {
  const byName: Partial<Record<ModuleName, unknown>> = {};
  const all: Opened[] = [];
  const close = async () => {
    for (const opened of [...all].reverse()) await opened.close?.();
  };
  try {
    for (const m of modules) {
      if (!m.in.includes(process)) continue;
      const deps: Record<string, unknown> = { ...kernel, before: [...all] };
      for (const need of m.needs) {
        if (!(need in byName)) throw new Error(`module ${m.name} needs ${need}, which ${process} has not opened before it`);
        deps[need] = byName[need];
      }
      const opened = await m.open(deps as unknown as Deps<ModuleName>, options);
      byName[m.name] = opened;
      all.push(opened as Opened);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { byName: byName as Partial<Modules>, all, close };
}

/** `opsctl purge`: each module's purge in the table's order, on opsctl's context; the result names each share. */
export async function purgeModules(deps: PurgeDeps): Promise<Record<string, object>> {
  const result: Record<string, object> = {};
  for (const m of modules) if (m.purge) result[m.name] = await m.purge(deps);
  return result;
}
