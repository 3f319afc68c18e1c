import crypto from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { PageQuery } from '../pagination/page.js';
import { DateTime } from '../http/schemas.js';
import { badRequest } from '../errors/app-error.js';
import type { AuditFilter, AuditService } from './audit-service.js';
import { auditActions } from './record.js';
import { checkOrg } from '../auth/role-policy.js';

export const AuditEntrySchema = Type.Object(
  {
    id: Type.String({ description: 'aud_ + ULID' }),
    ts: DateTime(),
    action: Type.String({ description: `what changed, e.g. token.revoke; one of ${auditActions.join(', ')}` }),
    actor: Type.Object({
      type: Type.Union([Type.Literal('user'), Type.Literal('token'), Type.Literal('operator')]),
      id: Type.String({ description: 'usr_… for a member signed in to the dashboard, tok_… for an API token, the account for an opsctl operator' }),
      name: Type.String(),
    }),
    target: Type.Object({ type: Type.String(), id: Type.String() }),
    project_id: Type.Optional(Type.String()),
    mode: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')])),
    request_id: Type.String({ description: "the change's X-Request-Id (one id per opsctl command)" }),
    ip: Type.String({ description: "the client's address ('' for opsctl)" }),
    user_agent: Type.String(),
    outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')], { description: 'failure: a refused attempt (a sign-in with a wrong password)' }),
    details: Type.Record(Type.String(), Type.Unknown(), { description: 'what changed; never a secret' }),
  },
  { $id: 'AuditEntry' },
);

const AuditQuery = Type.Composite([
  PageQuery,
  Type.Object({
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "the actor's id" })),
    action: Type.Optional(Type.String({ enum: [...auditActions] })),
    target_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    from: Type.Optional(DateTime('entries at or after this time')),
    to: Type.Optional(DateTime('entries before this time')),
  }),
]);
type AuditQuery = Static<typeof AuditQuery>;

/** The cursor belongs to the list with its filters: a page of one filtered list cannot continue another. */
const listName = (filter: AuditFilter): string =>
  `audit:${crypto.createHash('sha256').update(JSON.stringify([filter.actor, filter.action, filter.target_id, filter.from, filter.to])).digest('base64url').slice(0, 16)}`;

export function checkRange(filter: AuditFilter): void {
  if (filter.from !== undefined && filter.to !== undefined && Date.parse(filter.from) >= Date.parse(filter.to)) {
    throw badRequest('from must be before to', { field: 'from' });
  }
}

/** GET /v1/orgs/{orgId}/audit (DECISIONS.md §20): the organisation's audit log, newest first. */
export function registerAuditRoutes(v1: Api, ctx: AppContext, audit: AuditService): void {
  v1.get(
    '/orgs/:orgId/audit',
    {
      config: { scope: 'audit:read' },
      schema: {
        tags: ['audit'],
        operationId: 'listAuditEntries',
        summary: "List the organisation's audit log, newest first",
        description:
          'Every change made through the API, the web dashboard or opsctl, with who made it and from where; kept 400 days. Filters combine (and). Entries cannot be changed or deleted.',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }) }),
        querystring: AuditQuery,
        response: { 200: Type.Object({ entries: Type.Array(Type.Ref(AuditEntrySchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      checkOrg(tenant.orgId, request.params.orgId);
      const { limit, cursor, ...filter } = request.query as AuditQuery;
      checkRange(filter);
      const list = listName(filter);
      const page = ctx.paginator.request({ limit, cursor }, list, tenant.orgId);
      const { entries, next } = await audit.list(tenant.orgId, filter, page);
      const { items, nextCursor, hasMore } = ctx.paginator.pageAt(entries, next, list, tenant.orgId);
      return { entries: items, next_cursor: nextCursor, has_more: hasMore };
    },
  );
}
