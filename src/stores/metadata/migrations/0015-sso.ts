import type { Kysely } from 'kysely';

/**
 * Single sign-on with OpenID Connect (DECISIONS.md §22, src/sso, docs/sso.md): one provider
 * configuration per organisation, the e-mail domains that lead to it (a domain belongs to one
 * organisation at most, by a constraint, so two concurrent claims cannot both win), and the
 * sign-ins in flight (state, PKCE verifier, nonce), each used once. Text and integer columns
 * only, so the same statements run on SQLite and PostgreSQL.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_configs')
    .addColumn('org_id', 'text', (c) => c.primaryKey().references('organisations.id'))
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // Kept as given, like a webhook channel's signing secret: the server must send it to the
    // provider's token endpoint, so a hash would not do (docs/sso.md says so).
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('default_role', 'text', (c) => c.notNull())
    .addColumn('enforce', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('sso_domains')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organisations.id'))
    .execute();
  await db.schema.createIndex('sso_domains_org').on('sso_domains').column('org_id').execute();
  await db.schema
    .createTable('sso_logins')
    // SHA-256 of the state parameter: the row is found by it and deleted when used.
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    // SHA-256 of the flow cookie's value: the callback must come from the browser that started.
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_logins_expires').on('sso_logins').column('expires_at').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_logins').execute();
  await db.schema.dropTable('sso_domains').execute();
  await db.schema.dropTable('sso_configs').execute();
}
