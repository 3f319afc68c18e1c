import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { DashboardSessionsTable } from './dashboard-tables.js';
import type { Mode } from '../tenancy/tenant.js';
import { audit, type AuditChange } from '../audit/record.js';
import type { RequestOrigin } from '../tenancy/origin.js';

export interface DashboardUser {
  id: string;
  email: string;
  name: string;
}

export interface SessionRow extends DashboardSessionsTable {
  email: string;
  name: string;
}

export interface MembershipRow {
  org_id: string;
  org_name: string;
  role: string;
}

export interface Preferences {
  org_id: string;
  project_id: string;
  mode: Mode;
}

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Every statement of the dashboard's sign-in (tables of migration 0007, plus memberships and
 * projects read and session tokens revoked): route handlers and the service reach the
 * database only through this.
 */
export class DashboardStore {
  constructor(private readonly db: Kysely<Database>) {}

  userByEmail(email: string): Promise<DashboardUser | undefined> {
    return this.db.selectFrom('users').select(['id', 'email', 'name']).where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
  }

  async passwordHash(userId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('user_credentials').select('password_hash').where('user_id', '=', userId).executeTakeFirst();
    return row?.password_hash;
  }

  /** Inserts a one-time link, making the user's earlier unused links unusable (the newest link wins). */
  async createLink(row: { id: string; link_hash: string; user_id: string; created_at: string; expires_at: string }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('password_links').set({ used_at: row.created_at }).where('user_id', '=', row.user_id).where('used_at', 'is', null).execute();
      await trx.insertInto('password_links').values({ ...row, used_at: null }).execute();
    });
  }

  /** The e-mail address of a link's user while the link is usable (unused, unexpired); it stays usable. */
  async linkEmail(linkHash: string, now: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('password_links as l')
      .innerJoin('users as u', 'u.id', 'l.user_id')
      .select('u.email')
      .where('l.link_hash', '=', linkHash)
      .where('l.used_at', 'is', null)
      .where('l.expires_at', '>', now)
      .executeTakeFirst();
    return row?.email;
  }

  /**
   * Uses a link (single use, checked and marked in one statement: two requests with the same
   * link cannot both pass), sets the password and ends the user's sessions, in one
   * transaction. Undefined when the link is unknown, used or expired; else the user and the
   * session tokens revoked.
   */
  /** `request`: where the link was used from, for the audit log's user.password_set. */
  async useLink(linkHash: string, now: string, passwordHash: string, request?: RequestOrigin): Promise<{ userId: string; revokedTokens: string[] } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const link = await trx
        .selectFrom('password_links')
        .select(['id', 'user_id'])
        .where('link_hash', '=', linkHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (!link) return undefined;
      const used = await trx.updateTable('password_links').set({ used_at: now }).where('id', '=', link.id).where('used_at', 'is', null).executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1) return undefined;
      const existing = await trx.selectFrom('user_credentials').select('user_id').where('user_id', '=', link.user_id).executeTakeFirst();
      if (existing) {
        await trx.updateTable('user_credentials').set({ password_hash: passwordHash, updated_at: now }).where('user_id', '=', link.user_id).execute();
      } else {
        await trx.insertInto('user_credentials').values({ user_id: link.user_id, password_hash: passwordHash, updated_at: now }).execute();
      }
      const revokedTokens = await this.endSessions(trx, now, (q) => q.where('user_id', '=', link.user_id));
      const user = await trx.selectFrom('users').select(['id', 'name', 'email']).where('id', '=', link.user_id).executeTakeFirstOrThrow();
      // The link's holder acts as the user it was made for.
      const origin = request && { ...request, actor: { type: 'user' as const, id: user.id, name: user.name } };
      await this.recordForUser(trx, user.id, { action: 'user.password_set', origin, target: { type: 'user', id: user.id }, at: Date.parse(now), details: { email: user.email } });
      return { userId: link.user_id, revokedTokens };
    });
  }

  /** Starts a session; `signIn` is recorded with it in the audit log of each of the user's organisations. */
  async createSession(row: DashboardSessionsTable, signIn: Omit<AuditChange, 'orgId'>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('dashboard_sessions').values(row).execute();
      await this.recordForUser(trx, row.user_id, signIn);
    });
  }

  /** A refused sign-in of a known user, recorded in each of their organisations' audit logs. */
  async recordRefused(userId: string, refused: Omit<AuditChange, 'orgId'>): Promise<void> {
    await this.db.transaction().execute((trx) => this.recordForUser(trx, userId, refused));
  }

  /**
   * Sign-ins and passwords are the user's, not one organisation's: the change is recorded in
   * every organisation the user is a member of, so each one's Owners see it.
   */
  private async recordForUser(trx: Db, userId: string, change: Omit<AuditChange, 'orgId'>): Promise<void> {
    const orgs = await trx.selectFrom('memberships').select('org_id').where('user_id', '=', userId).execute();
    await audit.recordAll(
      trx,
      orgs.map((o) => ({ ...change, orgId: o.org_id })),
    );
  }

  sessionBySecretHash(secretHash: string): Promise<SessionRow | undefined> {
    return this.db
      .selectFrom('dashboard_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.id', 's.secret_hash', 's.user_id', 's.created_at', 's.last_seen_at', 's.idle_expires_at', 's.expires_at', 'u.email', 'u.name'])
      .where('s.secret_hash', '=', secretHash)
      .executeTakeFirst();
  }

  async touchSession(id: string, lastSeenAt: string, idleExpiresAt: string): Promise<void> {
    await this.db.updateTable('dashboard_sessions').set({ last_seen_at: lastSeenAt, idle_expires_at: idleExpiresAt }).where('id', '=', id).execute();
  }

  /** Ends one session and revokes its tokens; the revoked token ids (for the caches). */
  endSession(id: string, now: string): Promise<string[]> {
    return this.db.transaction().execute((trx) => this.endSessions(trx, now, (q) => q.where('id', '=', id)));
  }

  /** Ends every session of a user (no membership left) and revokes their tokens. */
  endUserSessions(userId: string, now: string): Promise<string[]> {
    return this.db.transaction().execute((trx) => this.endSessions(trx, now, (q) => q.where('user_id', '=', userId)));
  }

  private async endSessions(
    trx: Transaction<Database>,
    now: string,
    which: <Q extends { where: (column: 'id' | 'user_id', op: '=', value: string) => Q }>(q: Q) => Q,
  ): Promise<string[]> {
    const sessions = await which(trx.selectFrom('dashboard_sessions').select('id')).execute();
    if (sessions.length === 0) return [];
    const ids = sessions.map((s) => s.id);
    const tokens = await this.revokeTokens(trx, now, ids);
    await trx.deleteFrom('dashboard_sessions').where('id', 'in', ids).execute();
    return tokens;
  }

  private async revokeTokens(trx: Db, now: string, sessionIds: string[], orgId?: string): Promise<string[]> {
    if (sessionIds.length === 0) return [];
    let select = trx.selectFrom('api_tokens').select('id').where('session_id', 'in', sessionIds).where('revoked_at', 'is', null);
    if (orgId !== undefined) select = select.where('org_id', '=', orgId);
    const ids = (await select.execute()).map((t) => t.id);
    if (ids.length) await trx.updateTable('api_tokens').set({ revoked_at: now }).where('id', 'in', ids).execute();
    return ids;
  }

  /** A member removed from an organisation: the session tokens of that organisation are revoked. */
  revokeMemberTokens(userId: string, orgId: string, now: string): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const sessions = await trx.selectFrom('dashboard_sessions').select('id').where('user_id', '=', userId).execute();
      return this.revokeTokens(trx, now, sessions.map((s) => s.id), orgId);
    });
  }

  async hasMembership(userId: string): Promise<boolean> {
    const row = await this.db.selectFrom('memberships').select('org_id').where('user_id', '=', userId).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  memberships(userId: string): Promise<MembershipRow[]> {
    return this.db
      .selectFrom('memberships as m')
      .innerJoin('organisations as o', 'o.id', 'm.org_id')
      .innerJoin('roles as r', 'r.id', 'm.role_id')
      .select(['m.org_id', 'o.name as org_name', 'r.name as role'])
      .where('m.user_id', '=', userId)
      .orderBy('o.name')
      .orderBy('m.org_id')
      .execute();
  }

  async roleIn(userId: string, orgId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('memberships as m')
      .innerJoin('roles as r', 'r.id', 'm.role_id')
      .select('r.name')
      .where('m.user_id', '=', userId)
      .where('m.org_id', '=', orgId)
      .executeTakeFirst();
    return row?.name;
  }

  projectsOf(orgIds: string[]): Promise<Array<{ id: string; org_id: string; name: string }>> {
    if (orgIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('projects').select(['id', 'org_id', 'name']).where('org_id', 'in', orgIds).orderBy('created_at').orderBy('id').execute();
  }

  async projectInOrg(orgId: string, projectId: string): Promise<boolean> {
    const row = await this.db.selectFrom('projects').select('id').where('id', '=', projectId).where('org_id', '=', orgId).executeTakeFirst();
    return row !== undefined;
  }

  preferences(userId: string): Promise<Preferences | undefined> {
    return this.db.selectFrom('user_preferences').select(['org_id', 'project_id', 'mode']).where('user_id', '=', userId).executeTakeFirst();
  }

  async setPreferences(userId: string, preferences: Preferences, now: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('user_preferences')
        .set({ ...preferences, updated_at: now })
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) await trx.insertInto('user_preferences').values({ user_id: userId, ...preferences, updated_at: now }).execute();
    });
  }

  /** Expired sessions and links, used links, and session tokens past their expiry or revoked. */
  async purge(now: string): Promise<{ sessions: number; links: number; tokens: number }> {
    const sessions = await this.db.deleteFrom('dashboard_sessions').where((eb) => eb.or([eb('idle_expires_at', '<=', now), eb('expires_at', '<=', now)])).executeTakeFirst();
    const links = await this.db.deleteFrom('password_links').where((eb) => eb.or([eb('expires_at', '<=', now), eb('used_at', 'is not', null)])).executeTakeFirst();
    const tokens = await this.db
      .deleteFrom('api_tokens')
      .where('session_id', 'is not', null)
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('revoked_at', 'is not', null)]))
      .executeTakeFirst();
    return { sessions: Number(sessions.numDeletedRows), links: Number(links.numDeletedRows), tokens: Number(tokens.numDeletedRows) };
  }
}
