import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { PageQuery } from '../../pagination/page.js';
import { tenantKey } from '../../tenancy/tenant.js';
import { toChannelView, type ChannelService } from '../channel-service.js';
import { ChannelKindSchema, ChannelName, ChannelSchema, ChannelUrl, CreatedChannel, IdParams } from './schemas.js';

const tags = ['channels'];

/** POST/GET /channels, GET/PATCH/DELETE /channels/{id} (DECISIONS.md §18). */
export function registerChannelRoutes(v1: Api, ctx: AppContext, channels: ChannelService): void {
  v1.post(
    '/channels',
    {
      config: { scope: 'monitors:write', idempotency: 'body' },
      schema: {
        tags,
        summary: 'Create a notification channel (a webhook channel\'s signing secret is shown once)',
        body: Type.Object({ name: ChannelName, kind: ChannelKindSchema, url: ChannelUrl }, { additionalProperties: false }),
        response: { 201: CreatedChannel },
      },
    },
    async (request, reply) => {
      const { tenant } = requireAuth(request);
      return reply.code(201).send(await channels.create(tenant, request.body));
    },
  );

  v1.get(
    '/channels',
    {
      config: { scope: 'monitors:read' },
      schema: {
        tags,
        summary: "List this project's channels, newest first",
        querystring: PageQuery,
        response: { 200: Type.Object({ channels: Type.Array(Type.Ref(ChannelSchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const owner = tenantKey(tenant);
      const page = ctx.paginator.request(request.query, 'channels', owner);
      const rows = await channels.list(tenant, page);
      const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, 'channels', owner, (c) => [c.created_at, c.id]);
      return { channels: items.map(toChannelView), next_cursor: nextCursor, has_more: hasMore };
    },
  );

  v1.get(
    '/channels/:id',
    { config: { scope: 'monitors:read' }, schema: { tags, summary: 'Get a channel', params: IdParams, response: { 200: Type.Ref(ChannelSchema) } } },
    async (request) => toChannelView(await channels.get(requireAuth(request).tenant, request.params.id)),
  );

  v1.patch(
    '/channels/:id',
    {
      config: { scope: 'monitors:write' },
      schema: {
        tags,
        summary: 'Rename a channel, change its URL, or disable / re-enable it',
        description: '`enabled: true` re-enables a channel disabled after 20 failed deliveries in a row and forgets its failures.',
        params: IdParams,
        body: Type.Object({ name: Type.Optional(ChannelName), url: Type.Optional(ChannelUrl), enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        response: { 200: Type.Ref(ChannelSchema) },
      },
    },
    async (request) => toChannelView(await channels.update(requireAuth(request).tenant, request.params.id, request.body)),
  );

  v1.delete(
    '/channels/:id',
    {
      config: { scope: 'monitors:write' },
      schema: {
        tags,
        summary: 'Delete a channel (its pending notifications are marked failed)',
        params: IdParams,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) },
      },
    },
    async (request) => {
      await channels.remove(requireAuth(request).tenant, request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );
}
