/** Metadata tables of the dashboard's sign-in (migration 0007); api_tokens.session_id is in schema.ts. */
/** A user's dashboard password (src/dashboard): `scrypt$N$r$p$salt$hash`, never the password. */
export interface UserCredentialsTable {
  user_id: string;
  password_hash: string;
  updated_at: string;
}

/** One-time links to set a password (24 h, single use); only the link token's SHA-256 is kept. */
export interface PasswordLinksTable {
  id: string;
  link_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A signed-in dashboard session; the cookie's secret is kept only as its SHA-256. */
export interface DashboardSessionsTable {
  id: string;
  secret_hash: string;
  user_id: string;
  created_at: string;
  last_seen_at: string;
  /** Moves forward with use (12 h after the last request). */
  idle_expires_at: string;
  /** Absolute end (7 days after sign-in). */
  expires_at: string;
}

/** The dashboard's organisation / project / mode switcher, per user. */
export interface UserPreferencesTable {
  user_id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  updated_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    user_credentials: UserCredentialsTable;
    password_links: PasswordLinksTable;
    dashboard_sessions: DashboardSessionsTable;
    user_preferences: UserPreferencesTable;
  }
}
