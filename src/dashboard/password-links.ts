import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { AppError, forbidden, notFound } from '../errors/app-error.js';
import { DateTime } from '../http/schemas.js';
import { scopesOfRole } from '../auth/role-policy.js';
import { ownerRole } from '../auth/system-roles.js';
import type { DashboardService } from './dashboard-service.js';
import type { SessionRow } from './dashboard-store.js';

export interface PasswordLinkAnswer {
  user_id: string;
  /** Whether the user had a password before this answer (a link, if any, replaces it once used). */
  has_password: boolean;
  set_password_url: string | null;
  set_password_expires_at: string | null;
}

/** May this role manage members (members:write: Owner and Admin)? */
const managesMembers = (role: string | undefined): boolean => role !== undefined && scopesOfRole(role).includes('members:write');

/**
 * The one-time set-password link of a member, for an Owner or Admin to hand over
 * (docs/dashboard.md, "Password links from the dashboard"): what `opsctl member add` and
 * `opsctl user reset-password` print, for the web dashboard's Members page.
 *
 * A password is the user's, not the organisation's: whoever sets it signs in to every
 * organisation the user belongs to. So the caller must be allowed to manage the user in each of
 * them: an Owner or Admin there, and an Owner where the user is an Owner ("Admin cannot change
 * Owners", DECISIONS.md §17). A user who already has a password gets no link unless `reset`
 * asks for one explicitly (the current password works until the new one is set; earlier links
 * stop working).
 */
export async function issueMemberPasswordLink(
  service: DashboardService,
  caller: SessionRow,
  input: { org_id: string; user_id: string; reset: boolean },
  baseUrl: string,
): Promise<PasswordLinkAnswer> {
  const store = service.store;
  const callerRole = await store.roleIn(caller.user_id, input.org_id);
  if (callerRole === undefined) throw forbidden('you are not a member of this organisation');
  if (!managesMembers(callerRole)) {
    throw forbidden(`only an Owner or Admin can make password links, and you are ${article(callerRole)} ${callerRole} of this organisation`, { required_scope: 'members:write' });
  }
  const targetRole = await store.roleIn(input.user_id, input.org_id);
  if (targetRole === undefined) throw notFound(`user ${input.user_id} is not a member of this organisation`);
  for (const membership of await store.memberships(input.user_id)) {
    const mine = membership.org_id === input.org_id ? callerRole : await store.roleIn(caller.user_id, membership.org_id);
    if (!managesMembers(mine)) {
      throw forbidden(
        'this user is also a member of an organisation whose members you do not manage, and a password opens all of them: they keep their own password, or an operator prints them a link (opsctl user reset-password)',
      );
    }
    if (membership.role === ownerRole && mine !== ownerRole) {
      throw forbidden(
        `only an Owner can make a password link for an Owner, and you are ${article(mine!)} ${mine} ${membership.org_id === input.org_id ? 'of this organisation' : 'of another organisation this user owns'}`,
      );
    }
  }
  const hasPassword = await service.hasPassword(input.user_id);
  if (hasPassword && !input.reset) return { user_id: input.user_id, has_password: true, set_password_url: null, set_password_expires_at: null };
  const { link_token, expires_at } = await service.issuePasswordLink(input.user_id);
  return {
    user_id: input.user_id,
    has_password: hasPassword,
    set_password_url: `${baseUrl.replace(/\/+$/, '')}/dashboard/set-password#${link_token}`,
    set_password_expires_at: expires_at,
  };
}

const article = (word: string): string => (/^[aeiou]/i.test(word) ? 'an' : 'a');

/**
 * `POST /dashboard/password-links` (session cookie + Origin, like the other dashboard routes).
 * Registered inside registerDashboardRoutes, so its Origin check and session hook apply.
 */
export function registerPasswordLinkRoute(app: Api, service: DashboardService, publicOrigin: string | undefined): void {
  const session = (request: FastifyRequest): SessionRow => {
    if (!request.dashboardSession) throw new AppError('internal', 'an unexpected error occurred');
    return request.dashboardSession;
  };
  app.post(
    '/dashboard/password-links',
    {
      config: { dashboardSession: true },
      schema: {
        hide: true,
        body: Type.Object(
          {
            org_id: Type.String({ minLength: 1, maxLength: 64 }),
            user_id: Type.String({ minLength: 1, maxLength: 64 }),
            reset: Type.Optional(Type.Boolean({ description: 'a new link even when the user has a password' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            user_id: Type.String(),
            has_password: Type.Boolean(),
            set_password_url: Type.Union([Type.String(), Type.Null()]),
            set_password_expires_at: Type.Union([DateTime(), Type.Null()]),
          }),
        },
      },
    },
    // The link's address: OPS_PUBLIC_URL, else the origin the request came to (the Origin check passed).
    async (request) =>
      issueMemberPasswordLink(service, session(request), { ...request.body, reset: request.body.reset ?? false }, publicOrigin ?? `${request.protocol}://${request.host}`),
  );
}
