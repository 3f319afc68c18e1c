import { scopes as allScopes, type Scope } from '../auth/scopes.js';
import type { SystemRole } from '../orgs/system-roles.js';

/**
 * DECISIONS.md §17, the one place that maps a member's role to the scopes of the short-lived
 * tokens their dashboard session exchanges (docs/dashboard.md):
 * - Owner, Admin: everything.
 * - Developer: media, events (ingest, queries, tail, datasets: logs:*), own tokens (tokens:write),
 *   read members and usage.
 * - Viewer: read-only (media:read, logs:read, members:read, usage:read).
 * A role that is not a system role gets the Viewer's scopes (the least).
 */
export const roleScopes: Readonly<Record<SystemRole, readonly Scope[]>> = {
  Owner: allScopes,
  Admin: allScopes,
  Developer: ['media:read', 'media:write', 'logs:read', 'logs:write', 'tokens:write', 'members:read', 'usage:read'],
  Viewer: ['media:read', 'logs:read', 'members:read', 'usage:read'],
};

export function scopesOfRole(role: string): readonly Scope[] {
  return Object.hasOwn(roleScopes, role) ? roleScopes[role as SystemRole] : roleScopes.Viewer;
}
