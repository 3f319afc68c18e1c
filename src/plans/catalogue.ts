import fs from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const limit = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]);

export const PlanLimitsSchema = Type.Object(
  {
    max_file_bytes: Type.Integer({ minimum: 1 }),
    storage_bytes: limit,
    datasets: limit,
    retention_days: Type.Integer({ minimum: 1 }),
    live_tail: Type.Boolean(),
    events_month: limit,
    queries_month: limit,
    /** Monitors per organisation (DECISIONS.md §18); a plans file may leave it out (below). */
    monitors: limit,
  },
  { additionalProperties: false },
);

/** A plan's limits; `null` means unlimited. */
export type PlanLimits = Static<typeof PlanLimitsSchema>;

/** A plans file written before monitors existed stays valid: `monitors` is optional there. */
const FilePlanSchema = Type.Composite([Type.Omit(PlanLimitsSchema, ['monitors']), Type.Object({ monitors: Type.Optional(limit) })], { additionalProperties: false });
const PlansFileSchema = Type.Object({ plans: Type.Record(Type.String({ minLength: 1 }), FilePlanSchema) });

const MB = 1_000_000;
const GB = 1_000 * MB;
const TB = 1_000 * GB;

/** DECISIONS.md §8, cheapest first. */
const defaults: Record<string, PlanLimits> = {
  free: { max_file_bytes: 10 * MB, storage_bytes: 1 * GB, datasets: 3, retention_days: 7, live_tail: false, events_month: 1_000_000, queries_month: 10_000, monitors: 3 },
  starter: { max_file_bytes: 50 * MB, storage_bytes: 25 * GB, datasets: 10, retention_days: 14, live_tail: false, events_month: 20_000_000, queries_month: 100_000, monitors: 20 },
  pro: { max_file_bytes: 250 * MB, storage_bytes: 250 * GB, datasets: 50, retention_days: 30, live_tail: true, events_month: 500_000_000, queries_month: 1_000_000, monitors: 100 },
  enterprise: { max_file_bytes: 250 * MB, storage_bytes: 5 * TB, datasets: 500, retention_days: 90, live_tail: true, events_month: null, queries_month: null, monitors: 1000 },
};

export class PlanCatalogue {
  private constructor(private readonly plans: Map<string, PlanLimits>) {}

  /** The defaults, with the plans of OPS_PLANS_FILE replacing or added after them. */
  static load(plansFile: string | undefined): PlanCatalogue {
    const plans = new Map(Object.entries(defaults));
    if (plansFile) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(fs.readFileSync(plansFile, 'utf8'));
      } catch (error) {
        throw new Error(`OPS_PLANS_FILE: cannot read ${plansFile} as JSON: ${(error as Error).message}`, { cause: error });
      }
      if (!Value.Check(PlansFileSchema, parsed)) {
        const first = Value.Errors(PlansFileSchema, parsed).First();
        throw new Error(`OPS_PLANS_FILE: ${first?.path || '/'} ${first?.message ?? 'is invalid'}`);
      }
      // A plan without `monitors` keeps the default plan's of that name, else the cheapest's (3).
      for (const [name, limits] of Object.entries(parsed.plans)) {
        plans.set(name, { ...limits, monitors: limits.monitors !== undefined ? limits.monitors : (defaults[name]?.monitors ?? defaults.free!.monitors) });
      }
    }
    return new PlanCatalogue(plans);
  }

  names(): string[] {
    return [...this.plans.keys()];
  }

  has(name: string): boolean {
    return this.plans.has(name);
  }

  /** Limits of a plan; an organisation on a plan since removed from the file gets the cheapest. */
  limits(name: string): PlanLimits {
    return this.plans.get(name) ?? this.plans.values().next().value!;
  }

  /** The first (cheapest) plan that allows live tail, for 402 `required_plan`. */
  firstWithLiveTail(): string | undefined {
    return [...this.plans].find(([, limits]) => limits.live_tail)?.[0];
  }
}
