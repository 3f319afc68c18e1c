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

/**
 * Everything the server and opsctl share: the foundation's stores and services, built once
 * from the configuration. Route handlers reach stores only through these services. The
 * capabilities beyond it (media, events…) are opened on top of a context (app/capability.ts).
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
  /** Releases the metadata store; the last thing a process does, after its capabilities closed. */
  close(): Promise<void>;
}

export async function createContext(config: Config, clock: Clock): Promise<AppContext> {
  const plans = PlanCatalogue.load(config.plansFile);
  preparePrivateDataDir(config.dataDir);
  const metadata = await openMetadataStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const cursors = new CursorCodec(loadSecretKey(config.secretKey, config.dataDir));
  const { db } = metadata;
  return {
    config,
    clock,
    metadata,
    plans,
    quotas: new QuotaService(db, plans, clock),
    paginator: new Paginator(cursors),
    cursors,
    orgs: new OrgService(db, plans, clock),
    members: new MembersService(metadata, clock),
    tokens: new TokenService(db, clock),
    close: () => metadata.close(),
  };
}
