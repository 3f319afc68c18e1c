import { sql, type Kysely } from 'kysely';
import { AppError } from '../errors/app-error.js';
import type { Database } from '../stores/metadata/schema.js';
import type { PlanCatalogue, PlanLimits } from '../plans/catalogue.js';
import { monthOf, type Clock } from '../shared/clock.js';
import { precompile } from '../stores/metadata/precompiled.js';
import { QuotaAllowance } from './allowance.js';

export const quotaMetrics = ['storage_bytes', 'events_month', 'queries_month'] as const;
export type QuotaMetric = (typeof quotaMetrics)[number];

/** SPEC.md §2.11; `limit` null means unlimited. */
export interface QuotaDetail {
  metric: QuotaMetric;
  used: number;
  limit: number | null;
  cumulative: boolean;
}

type UpsertParam = 'orgId' | 'metric' | 'period' | 'amount' | 'limit';

const cumulative: Record<QuotaMetric, boolean> = { storage_bytes: true, events_month: false, queries_month: false };

/**
 * Organisation-wide counters (both modes count). A consumption is one conditional upsert
 * (`used + n <= limit`), so two concurrent requests can never pass a limit together, on
 * SQLite or PostgreSQL.
 */
export class QuotaService {
  /** The month of the last consumption (its key and bounds): asked on every query and ingest. */
  private month = monthOf(0);
  /**
   * The consumption's upsert, without and with a limit, built once: building it cost more than
   * SQLite takes to run it (POST /query and every ingest run it). Run on the caller's `db`,
   * which may be a transaction: the compiled text is the same.
   */
  private readonly unlimited;
  private readonly limited;
  /** POST /query's charges, in blocks while an organisation's queries keep coming (allowance.ts). */
  private readonly queries: QuotaAllowance;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly plans: PlanCatalogue,
    private readonly clock: Clock,
  ) {
    const upsert = (p: (name: UpsertParam) => string, limited: boolean) =>
      this.db
        .insertInto('usage_counters')
        .values({ org_id: p('orgId'), metric: p('metric') as QuotaMetric, period: p('period'), used: p('amount') as unknown as number })
        .onConflict((oc) => {
          const update = oc.columns(['org_id', 'metric', 'period']).doUpdateSet({ used: sql`usage_counters.used + ${p('amount')}` });
          return limited ? update.where(sql<boolean>`usage_counters.used + ${p('amount')} <= ${p('limit')}`) : update;
        });
    this.unlimited = precompile((p) => upsert(p as (name: UpsertParam) => string, false), ['orgId', 'metric', 'period', 'amount']);
    this.limited = precompile((p) => upsert(p, true), ['orgId', 'metric', 'period', 'amount', 'limit']);
    this.queries = new QuotaAllowance({
      charge: (orgId, plan, amount) => this.consume(orgId, plan, 'queries_month', amount),
      giveBack: (orgId, amount, period) => this.release(orgId, 'queries_month', amount, period),
      period: () => this.period('queries_month'),
    });
  }

  /**
   * Charges one query to `queries_month`: exact at the limit, but in blocks while the
   * organisation's queries keep coming (allowance.ts; docs/decisions.md "Query charges in blocks").
   */
  chargeQuery(orgId: string, plan: string): Promise<void> {
    return this.queries.take(orgId, plan);
  }

  /** Gives back the query units this process holds (at shutdown). */
  close(): Promise<void> {
    return this.queries.close();
  }

  private period(metric: QuotaMetric): string {
    if (cumulative[metric]) return '';
    const now = this.clock.now();
    if (now < this.month.start || now >= this.month.end) this.month = monthOf(now);
    return this.month.key;
  }

  private limitOf(limits: PlanLimits, metric: QuotaMetric): number | null {
    return limits[metric];
  }

  /**
   * Adds `amount` to the counter, or throws 402 quota_exceeded and changes nothing. `db` is
   * the caller's transaction when the change must commit together with its own writes.
   */
  async consume(orgId: string, plan: string, metric: QuotaMetric, amount: number, db: Kysely<Database> = this.db): Promise<void> {
    const period = this.period(metric);
    const limit = this.limitOf(this.plans.limits(plan), metric);
    // One statement, one row lock: the first consumption of a period inserts the row, later
    // ones add to it only while the sum stays within the limit (a request larger than the whole
    // limit is refused before it is tried, as the insert arm has no condition).
    if (limit === null || amount <= limit) {
      const values = { orgId, metric, period, amount, limit };
      const result = await db.executeQuery(limit === null ? this.unlimited(values) : this.limited(values));
      if (Number(result.numAffectedRows) === 1) return;
    }
    const quotas = await this.usage(orgId, plan, db);
    const detail = quotas.find((q) => q.metric === metric)!;
    throw new AppError(
      'quota_exceeded',
      `tier quota exceeded for ${metric}: ${detail.used} of ${detail.limit} used, this request needs ${amount} more; upgrade the plan or free some usage`,
      { metric, quotas },
    );
  }

  /** Gives back what a failed or removed thing had consumed (never below zero). */
  async release(orgId: string, metric: QuotaMetric, amount: number, periodOverride?: string, db: Kysely<Database> = this.db): Promise<void> {
    if (amount <= 0) return;
    await db
      .updateTable('usage_counters')
      .set({ used: sql`CASE WHEN used > ${amount} THEN used - ${amount} ELSE 0 END` })
      .where('org_id', '=', orgId)
      .where('metric', '=', metric)
      .where('period', '=', periodOverride ?? this.period(metric))
      .execute();
  }

  async usage(orgId: string, plan: string, db: Kysely<Database> = this.db): Promise<QuotaDetail[]> {
    const limits = this.plans.limits(plan);
    const rows = await db
      .selectFrom('usage_counters')
      .select(['metric', 'period', 'used'])
      .where('org_id', '=', orgId)
      .execute();
    return quotaMetrics.map((metric) => {
      const period = this.period(metric);
      const row = rows.find((r) => r.metric === metric && r.period === period);
      // Units this process charged ahead and holds are not used yet (allowance.ts).
      const held = metric === 'queries_month' ? this.queries.holding(orgId) : 0;
      return { metric, used: Math.max(0, Number(row?.used ?? 0) - held), limit: this.limitOf(limits, metric), cumulative: cumulative[metric] };
    });
  }
}
