import { scopes as allScopes, type Scope } from './scopes.js';
import { ownerRole, type SystemRole } from './system-roles.js';
import { forbidden } from '../errors/app-error.js';

/**
 * DECISIONS.md §17, the one place that says what a member's role may do through the web
 * dashboard (docs/dashboard.md). A token acts for a member (AuthContext.member) when it is a
 * dashboard session token or was created, directly or down a chain, with one: otherwise an
 * Admin or a Developer could mint a token in the dashboard and step around the rules below.
 * Tokens made with opsctl or another API token act for nobody and keep SPEC.md's rules.
 *
 * Scopes of the short-lived tokens a session exchanges:
 * - Owner, Admin: everything.
 * - Developer: media, events (ingest, queries, tail, datasets: logs:*), own tokens (tokens:write),
 *   read members and usage, monitors and their channels (monitors:*, DECISIONS.md §18).
 * - Viewer: read-only (media:read, logs:read, members:read, usage:read, monitors:read).
 * A role that is not a system role gets the Viewer's scopes (the least).
 */
export const roleScopes: Readonly<Record<SystemRole, readonly Scope[]>> = {
  Owner: allScopes,
  Admin: allScopes,
  Developer: ['media:read', 'media:write', 'logs:read', 'logs:write', 'tokens:write', 'members:read', 'usage:read', 'monitors:read', 'monitors:write'],
  Viewer: ['media:read', 'logs:read', 'members:read', 'usage:read', 'monitors:read'],
};

export function scopesOfRole(role: string): readonly Scope[] {
  return Object.hasOwn(roleScopes, role) ? roleScopes[role as SystemRole] : roleScopes.Viewer;
}

/** The member a token acts for, with their role in the token's organisation now (null: no longer a member). */
export interface ActingMember {
  userId: string;
  role: string | null;
}

/** Roles whose tokens manage every token of the project; any other manages its own only. */
const manageEveryToken: readonly string[] = ['Owner', 'Admin'] satisfies SystemRole[];

/**
 * "Own tokens" for Developers (and any role but Owner and Admin): the user whose tokens the
 * caller may list and revoke, or undefined for every token of the project (tokens acting for
 * an Owner or an Admin, and tokens acting for nobody).
 */
export function tokensOwnedBy(member: ActingMember | undefined): string | undefined {
  if (!member || (member.role !== null && manageEveryToken.includes(member.role))) return undefined;
  return member.userId;
}

/**
 * "Admin cannot change Owners": a token acting for a member changes an Owner's role, removes
 * an Owner or makes a member Owner only if that member is an Owner. Tokens acting for nobody
 * keep SPEC.md's rules (members:write suffices). Throws 403.
 */
export function checkOwnerChange(member: ActingMember | undefined, change: { currentRole: string; newRole?: string }): void {
  if (!member || member.role === ownerRole) return;
  const who =
    member.role === null
      ? 'this token acts for a user who is no longer a member of this organisation'
      : `this token acts for ${/^[aeiou]/i.test(member.role) ? 'an' : 'a'} ${member.role} of this organisation`;
  if (change.currentRole === ownerRole) {
    const verb = change.newRole === undefined ? 'remove' : 'change the role of';
    throw forbidden(`only an Owner can ${verb} an Owner (${who}): ask an Owner to do it`);
  }
  if (change.newRole === ownerRole) {
    throw forbidden(`only an Owner can make a member Owner (${who}): ask an Owner to do it`);
  }
}

/** An organisation's routes (`/v1/orgs/{orgId}/…`) answer only a token of that organisation. */
export function checkOrg(callerOrgId: string, pathOrgId: string): void {
  if (callerOrgId !== pathOrgId) throw forbidden('this token belongs to another organisation');
}
