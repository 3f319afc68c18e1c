import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { PageQuery } from '../../pagination/page.js';
import { tenantKey } from '../../tenancy/tenant.js';
import type { SavedSearchService } from '../search-service.js';
import { toSavedSearchView } from '../saved-search.js';
import { CreateSavedSearchBody, IdParams, PatchSavedSearchBody, SavedSearchSchema } from './schemas.js';

const tags = ['searches'];
const Deleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });

/** POST/GET /searches, GET/PATCH/DELETE /searches/{id} (DECISIONS.md §19). */
export function registerSearchRoutes(v1: Api, ctx: AppContext, searches: SavedSearchService): void {
  v1.post(
    '/searches',
    {
      config: { scope: 'logs:write', idempotency: 'body' },
      schema: { tags, operationId: 'createSavedSearch', summary: 'Save a search (a SOQL query and an optional time range)', body: CreateSavedSearchBody, response: { 201: Type.Ref(SavedSearchSchema) } },
    },
    async (request, reply) => reply.code(201).send(toSavedSearchView(await searches.create(requireAuth(request).tenant, request.body))),
  );

  v1.get(
    '/searches',
    {
      config: { scope: 'logs:read' },
      schema: {
        tags,
        operationId: 'listSavedSearches', summary: "List this project and mode's saved searches, newest first",
        querystring: PageQuery,
        response: { 200: Type.Object({ searches: Type.Array(Type.Ref(SavedSearchSchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const owner = tenantKey(tenant);
      const page = ctx.paginator.request(request.query, 'searches', owner);
      const rows = await searches.list(tenant, page);
      const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, 'searches', owner, (s) => [s.created_at, s.id]);
      return { searches: items.map(toSavedSearchView), next_cursor: nextCursor, has_more: hasMore };
    },
  );

  v1.get(
    '/searches/:id',
    { config: { scope: 'logs:read' }, schema: { tags, operationId: 'getSavedSearch', summary: 'Get a saved search', params: IdParams, response: { 200: Type.Ref(SavedSearchSchema) } } },
    async (request) => toSavedSearchView(await searches.get(requireAuth(request).tenant, request.params.id)),
  );

  v1.patch(
    '/searches/:id',
    {
      config: { scope: 'logs:write' },
      schema: { tags, operationId: 'updateSavedSearch', summary: 'Change a saved search (range: null removes its range)', params: IdParams, body: PatchSavedSearchBody, response: { 200: Type.Ref(SavedSearchSchema) } },
    },
    async (request) => toSavedSearchView(await searches.update(requireAuth(request).tenant, request.params.id, request.body)),
  );

  v1.delete(
    '/searches/:id',
    { config: { scope: 'logs:write' }, schema: { tags, operationId: 'deleteSavedSearch', summary: 'Delete a saved search', params: IdParams, response: { 200: Deleted } } },
    async (request) => {
      await searches.remove(requireAuth(request).tenant, request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );
}
