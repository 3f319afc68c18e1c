import type { Clock } from '../shared/clock.js';
import { iso } from '../shared/clock.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { EventStore, FieldStat, FieldStats } from '../engine/event-store.js';
import type { Dataset } from './dataset-service.js';
import { canonicalFieldTypes } from '../engine/event-columns.js';

/** SPEC §2.5 / DECISIONS §9: the same for every dataset, from the stored event's description. */
export const canonicalFields = canonicalFieldTypes;

export const schemaLimits = { keys: 50, samples: 5, windowMs: 24 * 3_600_000 } as const;

export interface DatasetSchema {
  dataset: string;
  canonical_fields: Array<{ name: string; type: string }>;
  payload_fields: FieldStat[];
  /** Events the payload fields were drawn from: the newest of the window, within the sample's bounds. */
  sampled_events: number;
  /** True when a bound of discovery left paths out (too many distinct paths, or nesting too deep). */
  payload_fields_truncated: boolean;
  generated_at: string;
}

/** Builds dataset schemas from the event store, cached per (org, project, mode, dataset). */
export class SchemaService {
  private readonly cache = new Map<string, { stats: FieldStats; generatedAt: number; expires: number }>();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** `fresh`: a new sample whatever the cache holds (it then holds the new one). */
  async schemaOf(tenant: Tenant, dataset: Pick<Dataset, 'id' | 'name'>, options: { fresh?: boolean } = {}): Promise<{ schema: DatasetSchema; hit: boolean; stats: FieldStats }> {
    const now = this.clock.now();
    const key = `${tenant.orgId}|${tenant.projectId}|${tenant.mode}|${dataset.id}`;
    let entry = this.cache.get(key);
    const hit = !options.fresh && entry !== undefined && entry.expires > now;
    if (!hit) {
      const stats = await this.store.fieldStats(tenant, {
        datasetId: dataset.id,
        sinceMs: now - schemaLimits.windowMs,
        maxKeys: schemaLimits.keys,
        maxSamples: schemaLimits.samples,
      });
      entry = { stats, generatedAt: now, expires: now + this.ttlMs };
      this.cache.set(key, entry);
      this.prune(now);
    }
    return {
      hit,
      stats: entry!.stats,
      schema: {
        dataset: dataset.name,
        canonical_fields: canonicalFields.map((f) => ({ ...f })),
        payload_fields: entry!.stats.fields,
        sampled_events: entry!.stats.sampledEvents,
        payload_fields_truncated: entry!.stats.truncated,
        generated_at: iso(entry!.generatedAt),
      },
    };
  }

  private prune(now: number): void {
    if (this.cache.size < 10_000) return;
    for (const [key, entry] of this.cache) if (entry.expires <= now) this.cache.delete(key);
  }
}
