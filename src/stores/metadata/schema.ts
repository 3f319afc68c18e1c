import type { Generated } from 'kysely';

/**
 * Metadata tables. Timestamps are ISO 8601 UTC strings with milliseconds in both dialects
 * (they sort as text), booleans are 0/1 integers, byte counts are bigints read as numbers.
 */
export interface OrganisationsTable {
  id: string;
  name: string;
  plan: string;
  primary_owner_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProjectsTable {
  id: string;
  org_id: string;
  name: string;
  created_at: string;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  avatar: string;
  created_at: string;
}

export interface RolesTable {
  id: string;
  org_id: string;
  name: string;
  is_system: number;
  created_at: string;
}

export interface MembershipsTable {
  org_id: string;
  user_id: string;
  role_id: string;
  joined_at: string;
}

export interface ApiTokensTable {
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  name: string;
  /** SHA-256 (hex) of the whole token; the token itself is never stored. */
  token_hash: string;
  /** Last four characters, so a person can tell tokens apart. */
  last_four: string;
  /** Space-separated scopes. */
  scopes: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
  /** The dashboard session a short-lived token was exchanged for (src/dashboard); null otherwise. */
  session_id: string | null;
  /**
   * The member the token acts for (migration 0008, src/auth/role-policy.ts): a session token's
   * own user, or the member of the token it was created with; null for tokens made by opsctl
   * or with a token that acts for nobody.
   */
  created_by_user_id: string | null;
}

export interface UsageCountersTable {
  org_id: string;
  metric: string;
  /** '' for cumulative metrics, 'YYYY-MM' for monthly ones. */
  period: string;
  used: number;
}

export interface Database {
  organisations: OrganisationsTable;
  projects: ProjectsTable;
  users: UsersTable;
  roles: RolesTable;
  memberships: MembershipsTable;
  api_tokens: ApiTokensTable;
  usage_counters: UsageCountersTable;
}

// Generated is re-exported for capability tables that add auto columns.
export type { Generated };
