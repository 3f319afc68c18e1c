import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { SsoConfigsTable, SsoLoginsTable } from './tables.js';
import './tables.js';

export interface StoredSsoConfig extends SsoConfigsTable {
  email_domains: string[];
}

/**
 * Every statement of single sign-on (tables of migration 0015): the service reaches the
 * database only through this, and every method but the sign-in's look-ups takes the
 * organisation, so one organisation's configuration cannot be read through another's.
 */
export class SsoStore {
  constructor(private readonly db: Kysely<Database>) {}

  async config(orgId: string): Promise<StoredSsoConfig | undefined> {
    const row = await this.db.selectFrom('sso_configs').selectAll().where('org_id', '=', orgId).executeTakeFirst();
    if (!row) return undefined;
    const domains = await this.db.selectFrom('sso_domains').select('domain').where('org_id', '=', orgId).orderBy('domain').execute();
    return { ...row, email_domains: domains.map((d) => d.domain) };
  }

  /** The organisation whose sign-in an e-mail domain leads to. */
  async orgOfDomain(domain: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('sso_domains').select('org_id').where('domain', '=', domain).executeTakeFirst();
    return row?.org_id;
  }

  /** The first of `domains` another organisation holds, if any. */
  async domainTakenElsewhere(orgId: string, domains: string[]): Promise<string | undefined> {
    if (domains.length === 0) return undefined;
    const row = await this.db.selectFrom('sso_domains').select('domain').where('domain', 'in', domains).where('org_id', '!=', orgId).orderBy('domain').executeTakeFirst();
    return row?.domain;
  }

  /** Creates or replaces the organisation's configuration and its domains, in one transaction. */
  async save(row: SsoConfigsTable, domains: string[], audit: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await audit(trx);
      const { org_id, created_at, ...changes } = row;
      const updated = await trx.updateTable('sso_configs').set(changes).where('org_id', '=', org_id).executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) await trx.insertInto('sso_configs').values({ org_id, created_at, ...changes }).execute();
      await trx.deleteFrom('sso_domains').where('org_id', '=', org_id).execute();
      await trx.insertInto('sso_domains').values(domains.map((domain) => ({ domain, org_id }))).execute();
    });
  }

  /** Removes the configuration, its domains and its sign-ins in flight; false when there was none. */
  async remove(orgId: string, audit: (trx: Kysely<Database>) => Promise<void>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('sso_domains').where('org_id', '=', orgId).execute();
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
