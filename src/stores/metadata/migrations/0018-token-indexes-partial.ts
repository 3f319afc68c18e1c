import { sql, type Kysely } from 'kysely';

/**
 * The token indexes on session_id and created_by_user_id hold only the tokens that have one.
 * An API token made with a token that acts for no member has neither, and its NULL entries were
 * written into both indexes on every creation (two of the pages a creation's commit wrote;
 * bench/audit-frames.ts counts them). Every query that uses them asks for a
 * value (`session_id in …`, `is not null`, `created_by_user_id = …`), which a partial index
 * serves on SQLite and PostgreSQL alike.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('api_tokens_session').execute();
  await db.schema.createIndex('api_tokens_session').on('api_tokens').column('session_id').where(sql.ref('session_id'), 'is not', null).execute();
  await db.schema.dropIndex('api_tokens_created_by').execute();
  await db.schema
    .createIndex('api_tokens_created_by')
    .on('api_tokens')
    .columns(['created_by_user_id', 'org_id'])
    .where(sql.ref('created_by_user_id'), 'is not', null)
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('api_tokens_session').execute();
  await db.schema.createIndex('api_tokens_session').on('api_tokens').column('session_id').execute();
  await db.schema.dropIndex('api_tokens_created_by').execute();
  await db.schema.createIndex('api_tokens_created_by').on('api_tokens').columns(['created_by_user_id', 'org_id']).execute();
}
