import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { PageQuery } from '../pagination/page.js';
import { DateTime, Ok } from '../http/schemas.js';
import { checkOrg } from '../auth/role-policy.js';

/** One shape for a member's role and the roles list: the list is where roleIds come from. */
const RoleSchema = Type.Object(
  { id: Type.String({ description: 'rol_ + ULID; the roleId of PATCH /orgs/{orgId}/members/{userId}' }), name: Type.String(), isSystem: Type.Boolean() },
  { $id: 'Role' },
);

const MemberSchema = Type.Object(
  {
    id: Type.String({ description: 'user id' }),
    name: Type.String(),
    email: Type.String(),
    avatar: Type.String({ description: 'URL or ""' }),
    role: Type.Ref(RoleSchema),
    joinedAt: DateTime(),
  },
  { $id: 'Member' },
);

const OrgParams = Type.Object({ orgId: Type.String({ maxLength: 64 }) });
const MemberParams = Type.Object({ orgId: Type.String({ maxLength: 64 }), userId: Type.String({ maxLength: 64 }) });

/** SPEC.md §4.6: members are organisation-wide; the path's organisation must be the token's. */
export function registerMemberRoutes(app: Api, ctx: AppContext): void {
  app.addSchema(RoleSchema);
  app.addSchema(MemberSchema);

  app.get(
    '/orgs/:orgId/members',
    {
      config: { scope: 'members:read' },
      schema: {
        tags: ['members'],
        summary: 'List organisation members, newest first',
        params: OrgParams,
        querystring: PageQuery,
        response: { 200: Type.Object({ members: Type.Array(Type.Ref(MemberSchema)), nextCursor: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { tenant } = requireAuth(request);
      checkOrg(tenant.orgId, request.params.orgId);
      const page = ctx.paginator.request(request.query, 'members', tenant.orgId);
      const rows = await ctx.members.list(tenant.orgId, page);
      // The list is shared until anything is written: its page is cut, signed and serialised
      // (by the route's own serializer) once and its bytes answered again (Paginator.pageBytes).
      const body = ctx.paginator.pageBytes(rows, page, 'members', tenant.orgId, (m) => [m.joinedAt, m.id], ({ items, nextCursor }) =>
        // The route's serializer writes text (fast-json-stringify).
        reply.serialize({ members: items, nextCursor }) as string,
      );
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(body);
    },
  );

  app.get(
    '/orgs/:orgId/roles',
    {
      config: { scope: 'members:read' },
      schema: {
        tags: ['members'],
        summary: "List the organisation's roles (the roleIds a member's role can be changed to)",
        description: 'The system roles Owner, Admin, Developer and Viewer in that order, then any others by name. Not paged.',
        params: OrgParams,
        response: { 200: Type.Object({ roles: Type.Array(Type.Ref(RoleSchema)) }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      checkOrg(tenant.orgId, request.params.orgId);
      return { roles: await ctx.members.roles(tenant.orgId) };
    },
  );

  app.patch(
    '/orgs/:orgId/members/:userId',
    {
      config: { scope: 'members:write' },
      schema: {
        tags: ['members'],
        summary: "Change a member's role",
        params: MemberParams,
        body: Type.Object({ roleId: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: Ok },
      },
    },
    async (request) => {
      const { tenant, member } = requireAuth(request);
      checkOrg(tenant.orgId, request.params.orgId);
      await ctx.members.changeRole(tenant.orgId, request.params.userId, request.body.roleId, member, tenant.origin);
      return { ok: true as const };
    },
  );

  app.delete(
    '/orgs/:orgId/members/:userId',
    {
      config: { scope: 'members:write' },
      schema: { tags: ['members'], summary: 'Remove a member', params: MemberParams, response: { 200: Ok } },
    },
    async (request) => {
      const { tenant, member } = requireAuth(request);
      checkOrg(tenant.orgId, request.params.orgId);
      await ctx.members.remove(tenant.orgId, request.params.userId, member, tenant.origin);
      return { ok: true as const };
    },
  );
}
