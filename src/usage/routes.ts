import { Type } from '@sinclair/typebox';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { DateTime } from '../http/schemas.js';
import { PlanLimitsSchema } from '../plans/catalogue.js';
import { iso, monthOf } from '../shared/clock.js';
import { monitorsOfOrg } from '../monitors/monitor-service.js';

const QuotaDetailSchema = Type.Object(
  {
    metric: Type.String(),
    used: Type.Integer(),
    limit: Type.Union([Type.Integer(), Type.Null()], { description: 'null means unlimited' }),
    cumulative: Type.Boolean(),
  },
  { $id: 'QuotaDetail' },
);

/** DECISIONS.md §14: usage (usage:read) and billing (billing:read) of the caller's organisation. */
export function registerUsageRoutes(app: Api, ctx: AppContext): void {
  app.addSchema(QuotaDetailSchema);
  const period = () => {
    const month = monthOf(ctx.clock.now());
    return { period_start: iso(month.start), period_end: iso(month.end) };
  };

  app.get(
    '/usage',
    {
      config: { scope: 'usage:read' },
      schema: {
        tags: ['usage'],
        summary: "The organisation's quota usage in the current period (storage, events and queries this month, monitors)",
        response: {
          200: Type.Object({ plan: Type.String(), period_start: DateTime(), period_end: DateTime(), quotas: Type.Array(Type.Ref(QuotaDetailSchema)) }),
        },
      },
    },
    async (request) => {
      const { tenant, plan } = requireAuth(request);
      const [quotas, monitors] = await Promise.all([ctx.quotas.usage(tenant.orgId, plan), monitorsOfOrg(ctx.metadata.db, tenant.orgId)]);
      // Monitors are counted, not metered: how many exist in the organisation against the plan's cap (DECISIONS.md §18).
      return { plan, ...period(), quotas: [...quotas, { metric: 'monitors', used: monitors, limit: ctx.plans.limits(plan).monitors, cumulative: true }] };
    },
  );

  app.get(
    '/billing',
    {
      config: { scope: 'billing:read' },
      schema: {
        tags: ['usage'],
        summary: "The organisation's plan, its limits and the billing period",
        response: { 200: Type.Object({ plan: Type.String(), plan_limits: PlanLimitsSchema, period_start: DateTime(), period_end: DateTime() }) },
      },
    },
    async (request) => {
      const { plan } = requireAuth(request);
      return { plan, plan_limits: ctx.plans.limits(plan), ...period() };
    },
  );
}
