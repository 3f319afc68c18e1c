import { Type } from '@sinclair/typebox';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { checkOwnerChange, checkOrg } from '../auth/role-policy.js';
import { badRequest } from '../errors/app-error.js';
import type { Member } from './members-service.js';

/**
 * `POST /orgs/{orgId}/members` (members:write, SPEC.md §5 "invite … members"; §4.7 leaves its
 * shape open): adds a user, created when the e-mail is new, with a role of the organisation —
 * what `opsctl member add` does, for the web dashboard's "Invite". No e-mail is sent: a new
 * user's one-time set-password link comes from `POST /dashboard/password-links`
 * (docs/dashboard.md), which the inviter hands over.
 */
export function registerMemberInviteRoute(app: Api, ctx: AppContext): void {
  app.post(
    '/orgs/:orgId/members',
    {
      config: { scope: 'members:write' },
      schema: {
        tags: ['members'],
        summary: 'Add a member (invite)',
        description:
          'Adds the user with this e-mail address (created when new; the name defaults to the local part) to the organisation with the role `roleId` (GET /orgs/{orgId}/roles). ' +
          'No e-mail is sent. 409 conflict when the user is already a member; 400 for an e-mail that is not one or a roleId not of this organisation. ' +
          "Through the web dashboard only an Owner may add an Owner (403 for an Admin's session).",
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }) }),
        body: Type.Object(
          {
            email: Type.String({ minLength: 3, maxLength: 320 }),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "for a new user; default: the e-mail's local part" })),
            roleId: Type.String({ minLength: 1, maxLength: 64 }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Member') },
      },
    },
    async (request, reply) => {
      const { tenant, member: actor } = requireAuth(request);
      checkOrg(tenant.orgId, request.params.orgId);
      const { email, name, roleId } = request.body;
      const role = (await ctx.members.roles(tenant.orgId)).find((r) => r.id === roleId);
      if (!role) throw badRequest(`roleId ${roleId} is not a role of this organisation (GET /v1/orgs/${tenant.orgId}/roles lists them)`, { field: 'roleId' });
      checkOwnerChange(actor, { currentRole: '', newRole: role.name });
      const { user_id } = await ctx.orgs.addMember({ orgId: tenant.orgId, email, name: name?.trim() || undefined, role: role.name, origin: tenant.origin });
      return reply.code(201).send(await memberOf(ctx, tenant.orgId, user_id));
    },
  );
}

async function memberOf(ctx: AppContext, orgId: string, userId: string): Promise<Member> {
  const row = await ctx.metadata.db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .innerJoin('roles as r', 'r.id', 'm.role_id')
    .select(['u.id', 'u.name', 'u.email', 'u.avatar', 'r.id as role_id', 'r.name as role_name', 'r.is_system', 'm.joined_at'])
    .where('m.org_id', '=', orgId)
    .where('m.user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    avatar: row.avatar,
    role: { id: row.role_id, name: row.role_name, isSystem: Number(row.is_system) === 1 },
    joinedAt: row.joined_at,
  };
}
