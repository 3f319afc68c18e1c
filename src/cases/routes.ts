import { Type } from '@sinclair/typebox';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { PageQuery } from '../pagination/page.js';
import { tenantKey } from '../tenancy/tenant.js';
import { DateTime } from '../http/schemas.js';
import { CasesService } from './cases-service.js';
import { caseStatuses } from './cases-table.js';

const Status = Type.Union(caseStatuses.map((s) => Type.Literal(s)), { description: 'open ↔ closed → archived (archived is final)' });
const Title = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: '1 to 200 characters, not blank' });
const Description = Type.String({ maxLength: 10_000, description: 'up to 10,000 characters; "" when not given' });

export const CaseSchema = Type.Object(
  {
    id: Type.String({ description: 'cas_ + ULID' }),
    title: Type.String(),
    description: Type.String(),
    status: Status,
    attachments: Type.Array(Type.Ref('File'), { description: 'active media files of the same project and mode, in the order attached' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'Case' },
);

const CaseParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'case id (cas_ + ULID)' }) });

/** SPEC.md §4.4 (announced; served with OPS_FEATURES containing `cases`). */
export function registerCaseRoutes(app: Api, ctx: AppContext, urls: PublicUrls): void {
  const cases = new CasesService(ctx.metadata.db, ctx.clock, () => urls.cdn);
  app.addSchema(CaseSchema);

  app.post(
    '/cases',
    {
      config: { scope: 'cases:write' },
      schema: {
        tags: ['cases'],
        summary: 'Open a case',
        body: Type.Object({ title: Title, description: Type.Optional(Description) }, { additionalProperties: false }),
        response: { 201: Type.Ref(CaseSchema) },
      },
    },
    async (request, reply) => {
      const { tenant } = requireAuth(request);
      const created = await cases.create(tenant, request.body.title, request.body.description ?? '');
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/cases',
    {
      config: { scope: 'cases:read' },
      schema: {
        tags: ['cases'],
        summary: 'List cases, newest first',
        querystring: Type.Composite([PageQuery, Type.Object({ status: Type.Optional(Status) })]),
        response: { 200: Type.Object({ cases: Type.Array(Type.Ref(CaseSchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const { status } = request.query;
      // The cursor belongs to the list as filtered: a cursor of another status filter is refused.
      const list = `cases:${status ?? ''}`;
      const owner = tenantKey(tenant);
      const page = ctx.paginator.request(request.query, list, owner);
      const rows = await cases.list(tenant, page, status);
      const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, list, owner, (c) => [c.created_at, c.id]);
      return { cases: items, next_cursor: nextCursor, has_more: hasMore };
    },
  );

  app.get(
    '/cases/:id',
    {
      config: { scope: 'cases:read' },
      schema: { tags: ['cases'], summary: 'One case', params: CaseParams, response: { 200: Type.Ref(CaseSchema) } },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      return cases.get(tenant, request.params.id);
    },
  );

  app.patch(
    '/cases/:id',
    {
      config: { scope: 'cases:write' },
      schema: {
        tags: ['cases'],
        summary: 'Change a case: title, description, status',
        description: 'Status transitions: open → closed, closed → open, closed → archived. Archived is final; any other change is 409 conflict.',
        params: CaseParams,
        body: Type.Object(
          { title: Type.Optional(Title), description: Type.Optional(Description), status: Type.Optional(Status) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Type.Ref(CaseSchema) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      return cases.update(tenant, request.params.id, request.body);
    },
  );

  app.post(
    '/cases/:id/attachments',
    {
      config: { scope: 'cases:write' },
      schema: {
        tags: ['cases'],
        summary: 'Attach a media file to a case',
        description: 'The file must be an active file of the same project and mode (else 404). Attaching the same file again changes nothing.',
        params: CaseParams,
        body: Type.Object({ file_id: Type.String({ minLength: 1, maxLength: 64, description: 'id of an active media file' }) }, { additionalProperties: false }),
        response: { 200: Type.Ref(CaseSchema) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      return cases.attach(tenant, request.params.id, request.body.file_id);
    },
  );
}
