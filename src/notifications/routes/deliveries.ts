import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { PageQuery } from '../../pagination/page.js';
import { tenantKey } from '../../tenancy/tenant.js';
import type { NotificationService } from '../notification-service.js';
import { DeliverySchema, IdParams } from './schemas.js';

const tags = ['channels'];

/** POST /channels/{id}/test and GET /channels/{id}/deliveries. */
export function registerDeliveryRoutes(v1: Api, ctx: AppContext, notifications: NotificationService): void {
  v1.post(
    '/channels/:id/test',
    {
      config: { scope: 'monitors:write' },
      schema: {
        tags,
        operationId: 'testChannel',
        summary: 'Send a test notification (status "test") through the outbox',
        description:
          'Answers 202 as soon as the notification is stored, with its delivery id; its attempts appear in GET /channels/{id}/deliveries. A disabled channel answers 409.',
        params: IdParams,
        response: { 202: Type.Object({ delivery_id: Type.String(), channel_id: Type.String() }) },
      },
    },
    async (request, reply) => reply.code(202).send(await notifications.sendTest(requireAuth(request).tenant, request.params.id)),
  );

  v1.get(
    '/channels/:id/deliveries',
    {
      config: { scope: 'monitors:read' },
      schema: {
        tags,
        summary: "A channel's notifications, newest first, each with every attempt",
        params: IdParams,
        querystring: PageQuery,
        response: { 200: Type.Object({ deliveries: Type.Array(Type.Ref(DeliverySchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const list = `channel-deliveries:${request.params.id}`;
      const owner = tenantKey(tenant);
      const page = ctx.paginator.request(request.query, list, owner);
      const rows = await notifications.deliveriesOfChannel(tenant, request.params.id, page);
      const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, list, owner, (d) => [d.created_at, d.id]);
      return { deliveries: items, next_cursor: nextCursor, has_more: hasMore };
    },
  );
}
