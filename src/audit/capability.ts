import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { Logger } from '../kernel/logger.js';
import { periodicPurge } from '../kernel/periodic-purge.js';
import { AuditService } from './audit-service.js';
import { AuditEntrySchema, registerAuditRoutes } from './routes.js';

export interface AuditCapability extends Capability {
  readonly service: AuditService;
}

/**
 * The audit log's reading side (DECISIONS.md §20, docs/audit.md): GET /v1/orgs/{orgId}/audit and
 * the purge of entries older than 400 days (at start, then every OPS_PURGE_INTERVAL_MS at most an
 * hour apart, and in `opsctl purge`). Entries are written by the services that make each change,
 * in its transaction, through record.ts.
 */
export function openAudit({ ctx, log }: { ctx: AppContext; log: Logger }): AuditCapability {
  const service = new AuditService(ctx.metadata.db, ctx.clock);
  const purge = () => service.purge();
  const job = periodicPurge(ctx, log, 'audit', purge);
  return {
    name: 'audit',
    service,
    routes: (v1) => {
      v1.addSchema(AuditEntrySchema);
      registerAuditRoutes(v1, ctx, service);
    },
    purge,
    start: job.start,
    stop: job.stop,
  };
}

/** The audit log's purge where no server runs it (`opsctl purge`). */
export function purgeAudit(ctx: Pick<AppContext, 'metadata' | 'clock'>): Promise<{ entries: number }> {
  return new AuditService(ctx.metadata.db, ctx.clock).purge();
}
