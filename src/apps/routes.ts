import { Type } from '@sinclair/typebox';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { PageQuery } from '../pagination/page.js';
import { tenantKey } from '../tenancy/tenant.js';
import { DateTime } from '../http/schemas.js';
import { AppsService } from './apps-service.js';

export const AppSchema = Type.Object(
  {
    id: Type.String({ description: 'app_ + ULID' }),
    name: Type.String(),
    description: Type.String(),
    created_at: DateTime(),
  },
  { $id: 'App' },
);

/** SPEC.md §4.5 and DECISIONS.md §14 (announced; served with OPS_FEATURES containing `apps`). */
export function registerAppRoutes(app: Api, ctx: AppContext): void {
  const apps = new AppsService(ctx.metadata.db, ctx.clock);
  app.addSchema(AppSchema);

  app.post(
    '/apps',
    {
      config: { scope: 'apps:write' },
      schema: {
        tags: ['apps'],
        summary: 'Submit an app',
        description: 'The name is unique in the project (409 conflict when taken).',
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: '1 to 100 characters, not blank; unique in the project' }),
            description: Type.Optional(Type.String({ maxLength: 10_000, description: '"" when not given' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref(AppSchema) },
      },
    },
    async (request, reply) => {
      const { tenant } = requireAuth(request);
      const created = await apps.create(tenant, request.body.name, request.body.description ?? '');
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/apps',
    {
      config: { scope: 'apps:read' },
      schema: {
        tags: ['apps'],
        summary: 'List apps, newest first',
        querystring: PageQuery,
        response: { 200: Type.Object({ apps: Type.Array(Type.Ref(AppSchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const owner = tenantKey(tenant);
      const page = ctx.paginator.request(request.query, 'apps', owner);
      const rows = await apps.list(tenant, page);
      const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, 'apps', owner, (a) => [a.created_at, a.id]);
      return { apps: items, next_cursor: nextCursor, has_more: hasMore };
    },
  );

  app.get(
    '/apps/:id',
    {
      config: { scope: 'apps:read' },
      schema: {
        tags: ['apps'],
        summary: 'One app',
        params: Type.Object({ id: Type.String({ maxLength: 64, description: 'app id (app_ + ULID)' }) }),
        response: { 200: Type.Ref(AppSchema) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      return apps.get(tenant, request.params.id);
    },
  );
}
