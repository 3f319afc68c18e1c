import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { SsoConfigsTable, SsoEmailDomainsTable, SsoLoginsTable } from './tables.js';
import './tables.js';

export type StoredSsoDomain = Omit<SsoEmailDomainsTable, 'org_id'>;

export interface StoredSsoConfig extends SsoConfigsTable {
  /** In the order of their names. */
  email_domains: StoredSsoDomain[];
}

/**
 * Every statement of single sign-on (tables of migrations 0015 and 0020): the service reaches
 * the database only through this, and every method but the sign-in's look-ups takes the
 * organisation, so one organisation's configuration cannot be read through another's.
 */
export class SsoStore {
  constructor(private readonly db: Kysely<Database>) {}

  async config(orgId: string): Promise<StoredSsoConfig | undefined> {
    const row = await this.db.selectFrom('sso_configs').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    if (!row) return undefined;
    const domains = await this.db.selectFrom('sso_email_domains').select(['domain', 'token', 'created_at', 'verified_at']).where('org_id', '=', orgId).orderBy('domain').execute();
    return { ...row, email_domains: domains };
  }

  /** The organisation whose sign-in an e-mail domain leads to: the one that verified it. */
  async orgOfDomain(domain: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('sso_email_domains').select('org_id').where('domain', '=', domain).where('verified_at', 'is not', null).executeTakeFirst();
    return row?.org_id;
  }

  /** The first of `domains` another organisation has verified, if any. */
  async verifiedElsewhere(orgId: string, domains: string[]): Promise<string | undefined> {
    if (domains.length === 0) return undefined;
    const row = await this.db
      .selectFrom('sso_email_domains')
      .select('domain')
      .where('domain', 'in', domains)
      .where('verified_at', 'is not', null)
      .where('org_id', '!=', orgId)
      .orderBy('domain')
      .executeTakeFirst();
    return row?.domain;
  }

  /**
   * Creates or replaces the organisation's configuration and its domains, in one transaction. A
   * domain it already names keeps its token and its verification; a domain no longer named is
   * forgotten (named again later, it gets a new token and must be verified again).
   */
  async save(row: SsoConfigsTable, domains: string[], newToken: () => string, audit: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await audit(trx);
      const { org_id, created_at, ...changes } = row;
      const updated = await trx.updateTable('sso_configs').set(changes).where('org_id', '=', org_id).executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) await trx.insertInto('sso_configs').values({ org_id, created_at, ...changes }).execute();
      await trx.deleteFrom('sso_email_domains').where('org_id', '=', org_id).where('domain', 'not in', domains).execute();
      await trx
        .insertInto('sso_email_domains')
        .values(domains.map((domain) => ({ org_id, domain, token: newToken(), created_at: row.updated_at, verified_at: null })))
        .onConflict((oc) => oc.columns(['org_id', 'domain']).doNothing())
        .execute();
    });
  }

  /**
   * Marks the organisation's domain verified at `at`, with its audit entry in the same
   * transaction; false when it is not in the settings or already verified. Throws the unique
   * index's violation when another organisation holds the domain verified.
   */
  async verify(orgId: string, domain: string, at: string, audit: (trx: Kysely<Database>) => Promise<void>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx.updateTable('sso_email_domains').set({ verified_at: at }).where('org_id', '=', orgId).where('domain', '=', domain).where('verified_at', 'is', null).executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await audit(trx);
      return true;
    });
  }

  /** Removes the configuration, its domains and its sign-ins in flight; false when there was none. */
  async remove(orgId: string, audit: (trx: Kysely<Database>) => Promise<void>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('sso_email_domains').where('org_id', '=', orgId).execute();
      await trx.deleteFrom('sso_logins').where('org_id', '=', orgId).execute();
      const deleted = await trx.deleteFrom('sso_configs').where('org_id', '=', orgId).executeTakeFirst();
      if (Number(deleted.numDeletedRows) !== 1) return false;
      await audit(trx);
      return true;
    });
  }

  /** Sign-ins of the organisation still in flight (not yet used, not yet expired). */
  async loginsInFlight(orgId: string, now: string): Promise<number> {
    const row = await this.db
      .selectFrom('sso_logins')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async createLogin(row: SsoLoginsTable): Promise<void> {
    await this.db.insertInto('sso_logins').values(row).execute();
  }

  /**
   * Takes a sign-in in flight by its state: read and deleted in one transaction, and only the
   * request whose DELETE removed the row gets it, so a state works once (a replay finds nothing).
   */
  async takeLogin(stateHash: string): Promise<SsoLoginsTable | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('sso_logins').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
      if (!row) return undefined;
      const deleted = await trx.deleteFrom('sso_logins').where('state_hash', '=', stateHash).executeTakeFirst();
      return Number(deleted.numDeletedRows) === 1 ? row : undefined;
    });
  }

  /** The organisations other than `orgId` the user is a member of. */
  async otherMemberships(userId: string, orgId: string): Promise<number> {
    const rows = await this.db.selectFrom('memberships').select('org_id').where('user_id', '=', userId).where('org_id', '!=', orgId).execute();
    return rows.length;
  }

  /**
   * The organisations that refuse this user's password sign-in: those they are a member of that
   * enforce single sign-on and whose primary owner they are not.
   */
  enforcingOrgs(userId: string): Promise<Array<{ org_id: string; name: string }>> {
    return this.db
      .selectFrom('memberships as m')
      .innerJoin('sso_configs as c', 'c.org_id', 'm.org_id')
      .innerJoin('organisations as o', 'o.id', 'm.org_id')
      .select(['o.id as org_id', 'o.name'])
      .where('m.user_id', '=', userId)
      .where('c.enforce', '=', 1)
      .where((eb) => eb.or([eb('o.primary_owner_id', 'is', null), eb('o.primary_owner_id', '!=', userId)]))
      .orderBy('o.name')
      .execute();
  }

  /** Sign-ins in flight past their expiry (abandoned at the provider). */
  async purge(now: string): Promise<number> {
    const result = await this.db.deleteFrom('sso_logins').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
