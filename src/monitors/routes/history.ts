import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { PageQuery } from '../../pagination/page.js';
import { tenantKey } from '../../tenancy/tenant.js';
import { DateTime } from '../../http/schemas.js';
import type { MonitorHistory } from '../history.js';
import { IdParams } from './schemas.js';

const State = Type.Union([Type.Literal('ok'), Type.Literal('pending'), Type.Literal('firing')]);
const HistoryItem = Type.Union([
  Type.Object({
    type: Type.Literal('state_change'),
    id: Type.String(),
    group: Type.Record(Type.String(), Type.Unknown()),
    from: State,
    to: State,
    value: Type.Union([Type.Number(), Type.Null()]),
    created_at: DateTime(),
  }),
  Type.Object({ type: Type.Literal('notification'), id: Type.String(), created_at: DateTime(), delivery: Type.Ref('ChannelDelivery') }),
]);

/** GET /monitors/{id}/history: state changes and notifications, newest first. */
export function registerHistoryRoutes(v1: Api, ctx: AppContext, history: MonitorHistory): void {
  v1.get(
    '/monitors/:id/history',
    {
      config: { scope: 'monitors:read' },
      schema: {
        tags: ['monitors'],
        summary: "A monitor's state changes and notifications (each with every attempt), newest first",
        params: IdParams,
        querystring: PageQuery,
        response: { 200: Type.Object({ history: Type.Array(HistoryItem), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const list = `monitor-history:${request.params.id}`;
      const owner = tenantKey(tenant);
      const page = ctx.paginator.request(request.query, list, owner);
      const rows = await history.page(tenant, request.params.id, page);
      const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, list, owner, (h) => [h.created_at, h.id]);
      return { history: items, next_cursor: nextCursor, has_more: hasMore };
    },
  );
}
