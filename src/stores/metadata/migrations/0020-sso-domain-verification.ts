import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';

/**
 * An organisation's SSO e-mail domains are verified by a DNS TXT record before they route anyone
 * (DECISIONS.md §22, docs/sso.md "Verify your domains"). 0015's `sso_domains` gave a domain to
 * the first organisation that named it; `sso_email_domains` lets several organisations name the
 * same domain and only one hold it verified:
 * - one row per organisation and domain, with the token that organisation must publish (random,
 *   kept while the domain stays in its settings) and `verified_at` once the record was found;
 * - a unique index on `domain` over verified rows only (partial, on SQLite and PostgreSQL alike):
 *   two organisations verifying the same domain at once cannot both win, and it is the index the
 *   sign-in's look-up by domain reads.
 * Domains named before this migration were claimed without proof: they are copied unverified,
 * each with a fresh token, and route no sign-in until an Owner of their organisation verifies them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_email_domains')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('domain', 'text', (c) => c.notNull())
    // Published in DNS by the organisation, so not a secret: kept as given.
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'text')
    .addPrimaryKeyConstraint('sso_email_domains_pk', ['org_id', 'domain'])
    .execute();
  await db.schema.createIndex('sso_email_domains_verified').unique().on('sso_email_domains').column('domain').where(sql.ref('verified_at'), 'is not', null).execute();
  const claimed = (await db.selectFrom('sso_domains').select(['org_id', 'domain']).execute()) as Array<{ org_id: string; domain: string }>;
  const now = new Date().toISOString();
  for (let i = 0; i < claimed.length; i += 500) {
    const rows = claimed.slice(i, i + 500).map((r) => ({ ...r, token: crypto.randomBytes(16).toString('hex'), created_at: now, verified_at: null }));
    await db.insertInto('sso_email_domains').values(rows).execute();
  }
  await db.schema.dropTable('sso_domains').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sso_domains')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organisations.id'))
    .execute();
  await db.schema.createIndex('sso_domains_org').on('sso_domains').column('org_id').execute();
  // 0015 held one organisation per domain: the verified one's, else the first to name it.
  const rows = (await db.selectFrom('sso_email_domains').select(['org_id', 'domain', 'verified_at', 'created_at']).execute()) as Array<{ org_id: string; domain: string; verified_at: string | null; created_at: string }>;
  const kept = new Map<string, string>();
  const rank = (r: (typeof rows)[number]) => `${r.verified_at === null ? 1 : 0}${r.created_at}`;
  for (const r of [...rows].sort((x, y) => (rank(x) < rank(y) ? -1 : 1))) if (!kept.has(r.domain)) kept.set(r.domain, r.org_id);
  const values = [...kept].map(([domain, org_id]) => ({ domain, org_id }));
  for (let i = 0; i < values.length; i += 500) await db.insertInto('sso_domains').values(values.slice(i, i + 500)).execute();
  await db.schema.dropTable('sso_email_domains').execute();
}
