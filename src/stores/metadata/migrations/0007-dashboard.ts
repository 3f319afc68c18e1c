import type { Kysely } from 'kysely';

/**
 * The web dashboard's sign-in (DECISIONS.md §17, docs/dashboard.md): passwords, one-time links
 * to set them, server-side sessions, each user's switcher choice, and the mark on the
 * short-lived API tokens a session exchanges (api_tokens.session_id). Secrets are stored only
 * as hashes. Text and integer columns only, so the same statements run on SQLite and PostgreSQL.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('user_credentials')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id'))
    // scrypt$N$r$p$salt$hash (base64url): the parameters travel with the hash.
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('password_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('link_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('password_links_user').on('password_links').column('user_id').execute();
  await db.schema.createIndex('password_links_expires').on('password_links').column('expires_at').execute();
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('idle_expires_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dashboard_sessions_user').on('dashboard_sessions').column('user_id').execute();
  await db.schema.createIndex('dashboard_sessions_idle').on('dashboard_sessions').column('idle_expires_at').execute();
  await db.schema
    .createTable('user_preferences')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id'))
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The session a short-lived dashboard token belongs to; null for every other token.
  await db.schema.alterTable('api_tokens').addColumn('session_id', 'text').execute();
  await db.schema.createIndex('api_tokens_session').on('api_tokens').column('session_id').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('api_tokens_session').execute();
  await db.schema.alterTable('api_tokens').dropColumn('session_id').execute();
  for (const table of ['user_preferences', 'dashboard_sessions', 'password_links', 'user_credentials']) {
    await db.schema.dropTable(table).execute();
  }
}
