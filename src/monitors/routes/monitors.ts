import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { PageQuery } from '../../pagination/page.js';
import { tenantKey } from '../../tenancy/tenant.js';
import type { MonitorService } from '../monitor-service.js';
import type { NotificationService } from '../../notifications/notification-service.js';
import type { PublicUrls } from '../../kernel/public-urls.js';
import { sendMonitorTest } from '../notification-check.js';
import { toMonitorView } from '../monitor.js';
import type { MonitorStatuses } from '../status.js';
import type { MonitorsTable } from '../tables.js';
import type { Tenant } from '../../tenancy/tenant.js';
import { CreateMonitorBody, IdParams, MonitorSchema, PatchMonitorBody } from './schemas.js';

const tags = ['monitors'];

/** POST/GET /monitors, GET/PATCH/DELETE /monitors/{id}, POST /monitors/{id}/test (DECISIONS.md §18). */
export function registerMonitorRoutes(
  v1: Api,
  ctx: AppContext,
  monitors: MonitorService,
  statuses: MonitorStatuses,
  test: { notifications: Pick<NotificationService, 'enqueue'>; urls: PublicUrls },
): void {
  // Every answer that is a Monitor carries its status (status.ts), read after the change.
  const withStatus = async (tenant: Tenant, row: MonitorsTable) => ({ ...toMonitorView(row), status: await statuses.one(tenant, row) });

  v1.post(
    '/monitors',
    {
      config: { scope: 'monitors:write', idempotency: 'body' },
      schema: {
        tags,
        summary: 'Create a threshold or match monitor',
        description: "Counts toward the plan's `monitors` (per organisation); past it 402 quota_exceeded with metric `monitors`.",
        body: CreateMonitorBody,
        response: { 201: Type.Ref(MonitorSchema) },
      },
    },
    async (request, reply) => {
      const { tenant, plan } = requireAuth(request);
      return reply.code(201).send(await withStatus(tenant, await monitors.create(tenant, plan, request.body)));
    },
  );

  v1.get(
    '/monitors',
    {
      config: { scope: 'monitors:read' },
      schema: {
        tags,
        summary: "List this project's monitors, newest first, each with its status",
        querystring: PageQuery,
        response: { 200: Type.Object({ monitors: Type.Array(Type.Ref(MonitorSchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const owner = tenantKey(tenant);
      const page = ctx.paginator.request(request.query, 'monitors', owner);
      const rows = await monitors.list(tenant, page);
      const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, 'monitors', owner, (m) => [m.created_at, m.id]);
      // The page's statuses in one query per store, not one per monitor.
      const status = await statuses.of(tenant, items);
      return { monitors: items.map((m) => ({ ...toMonitorView(m), status: status.get(m.id)! })), next_cursor: nextCursor, has_more: hasMore };
    },
  );

  v1.get(
    '/monitors/:id',
    { config: { scope: 'monitors:read' }, schema: { tags, summary: 'Get a monitor with its status', params: IdParams, response: { 200: Type.Ref(MonitorSchema) } } },
    async (request) => {
      const { tenant } = requireAuth(request);
      return withStatus(tenant, await monitors.get(tenant, request.params.id));
    },
  );

  v1.patch(
    '/monitors/:id',
    {
      config: { scope: 'monitors:write' },
      schema: {
        tags,
        summary: 'Change a monitor (mute it with muted_until); its kind cannot change',
        params: IdParams,
        body: PatchMonitorBody,
        response: { 200: Type.Ref(MonitorSchema) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      return withStatus(tenant, await monitors.update(tenant, request.params.id, request.body));
    },
  );

  v1.delete(
    '/monitors/:id',
    {
      config: { scope: 'monitors:write' },
      schema: { tags, summary: 'Delete a monitor with its states and history', params: IdParams, response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) } },
    },
    async (request) => {
      await monitors.remove(requireAuth(request).tenant, request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );

  v1.post(
    '/monitors/:id/test',
    {
      config: { scope: 'monitors:write' },
      schema: {
        tags,
        summary: "Send a test notification of the monitor to its channels",
        description:
          'Stores a `status: "test"` notification per channel of the monitor in the outbox and answers at once (202) with the ' +
          'delivery ids; the attempts show in the monitor\'s history. A deleted channel is skipped; a disabled one is stored and failed.',
        params: IdParams,
        response: {
          202: Type.Object({
            monitor_id: Type.String(),
            deliveries: Type.Array(Type.Object({ channel_id: Type.String(), delivery_id: Type.String() })),
          }),
        },
      },
    },
    async (request, reply) => {
      const { tenant } = requireAuth(request);
      const row = await monitors.get(tenant, request.params.id);
      const deliveries = await sendMonitorTest(test.notifications, ctx.clock, test.urls.api, tenant, row);
      return reply.code(202).send({ monitor_id: row.id, deliveries });
    },
  );
}
