import { sql, type Kysely } from 'kysely';

/**
 * The member a token acts for (DECISIONS.md §17, docs/dashboard.md "Roles in the dashboard"):
 * for a session token the user of its session, for a token created with a token that acts for
 * a member that member. Null for tokens made by opsctl or with a token that acts for nobody.
 * A Developer's tokens list and revoke only their own; an Admin's cannot change Owners.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_tokens').addColumn('created_by_user_id', 'text').execute();
  // Session tokens issued before this migration (15 minutes at most) belong to their session's user.
  await sql`update api_tokens set created_by_user_id = (select s.user_id from dashboard_sessions s where s.id = api_tokens.session_id) where session_id is not null`.execute(db);
  // A Developer's GET /tokens: that user's tokens of the project.
  await db.schema.createIndex('api_tokens_created_by').on('api_tokens').columns(['created_by_user_id', 'org_id']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('api_tokens_created_by').execute();
  await db.schema.alterTable('api_tokens').dropColumn('created_by_user_id').execute();
}
