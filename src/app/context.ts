import type { Config } from '../config/config.js';
import type { Clock } from '../shared/clock.js';
import { openMetadataStore, type MetadataStore } from '../stores/metadata/database.js';
import { PlanCatalogue } from '../plans/catalogue.js';
import { QuotaService } from '../quotas/quota-service.js';
import { CursorCodec } from '../pagination/cursor.js';
import { Paginator } from '../pagination/page.js';
import { loadSecretKey } from '../shared/secret-key.js';
import { OrgService } from '../orgs/org-service.js';
import { MembersService } from '../members/members-service.js';
import { TokenService } from '../tokens/token-service.js';
import { preparePrivateDataDir } from '../shared/private-data-dir.js';
import type { Bus } from '../cluster/bus.js';
import { openBus } from '../cluster/open-bus.js';
import type { Logger } from '../kernel/logger.js';
import { cliLogger } from '../kernel/cli-logger.js';

/**
 * Everything the server and opsctl share: the foundation's stores and services, built once
 * from the configuration. Route handlers reach stores only through these services. The
 * capabilities beyond it (media, events…) are opened on top of a context (kernel/capability.ts).
 */
export interface AppContext {
  config: Config;
  clock: Clock;
  metadata: MetadataStore;
  plans: PlanCatalogue;
  quotas: QuotaService;
  paginator: Paginator;
  cursors: CursorCodec;
  orgs: OrgService;
  members: MembersService;
  tokens: TokenService;
  /**
   * Messages between the installation's processes (src/cluster): NATS with OPS_NATS_URL, this
   * process only without. Token revocations and plan changes are published on it once
   * committed, by the API and opsctl alike; the server also sends live tail's wake-ups.
   */
  bus: Bus;
  /** Releases the bus and the metadata store; the last thing a process does, after its capabilities closed. */
  close(): Promise<void>;
}

export interface ContextOptions {
  /** Where the bus logs its outages (default: opsctl's logger, on stderr). */
  log?: Logger;
}

/**
 * Organisations, with each plan change announced once committed: every process's token cache
 * drops the organisation's tokens, whose AuthContext carries the plan.
 */
class AnnouncingOrgService extends OrgService {
  constructor(
    db: ConstructorParameters<typeof OrgService>[0],
    plans: PlanCatalogue,
    clock: Clock,
    private readonly bus: Bus,
  ) {
    super(db, plans, clock);
  }

  override async setPlan(orgId: string, plan: string): Promise<void> {
    await super.setPlan(orgId, plan);
    this.bus.publish('org.changed', { orgId });
    await this.bus.flush();
  }
}

export async function createContext(config: Config, clock: Clock, options: ContextOptions = {}): Promise<AppContext> {
  const plans = PlanCatalogue.load(config.plansFile);
  preparePrivateDataDir(config.dataDir);
  const metadata = await openMetadataStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const cursors = new CursorCodec(loadSecretKey(config.secretKey, config.dataDir));
  const { db } = metadata;
  // Connects on first use: an opsctl command that publishes nothing never dials NATS.
  const bus = await openBus(config.natsUrl, options.log ?? (config.natsUrl ? cliLogger(config) : undefined));
  const members = new MembersService(metadata, clock);
  // A token acting for a member carries the member's role (src/auth/role-policy.ts): a role
  // change or removal drops the organisation's tokens from every process's cache.
  members.onChanged(async (orgId) => {
    bus.publish('org.changed', { orgId });
    await bus.flush();
  });
  const quotas = new QuotaService(db, plans, clock);
  return {
    config,
    clock,
    metadata,
    plans,
    quotas,
    paginator: new Paginator(cursors),
    cursors,
    orgs: new AnnouncingOrgService(db, plans, clock, bus),
    members,
    tokens: new TokenService(metadata, clock, bus),
    bus,
    close: async () => {
      // Query units charged ahead and not used go back before the store closes (allowance.ts).
      await quotas.close().catch(() => undefined);
      await bus.close();
      await metadata.close();
    },
  };
}
