import { sql, type CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { MetadataStore } from '../stores/metadata/database.js';
import { badRequest, conflict, notFound } from '../errors/app-error.js';
import type { PageRequest } from '../pagination/page.js';
import { iso, type Clock } from '../shared/clock.js';
import { ownerRole, systemRoles } from '../auth/system-roles.js';
import { checkOwnerChange, type ActingMember } from '../auth/role-policy.js';
import { precompile } from '../stores/metadata/precompiled.js';
import { keysetBefore } from '../pagination/keyset.js';
import { audit } from '../audit/record.js';
import type { Origin } from '../tenancy/origin.js';

/** A role as a member carries it (SPEC.md §2.10) and as GET /orgs/{orgId}/roles lists it. */
export interface Role {
  id: string;
  name: string;
  isSystem: boolean;
}

/** SPEC.md §2.10. */
export interface Member {
  id: string;
  name: string;
  email: string;
  avatar: string;
  role: Role;
  joinedAt: string;
}

/**
 * Members are organisation-wide (the same for both modes). Every method takes the
 * caller's organisation and refuses any other with 403 before touching data.
 */
/** A row of the members list query. */
type ListRow = CompiledRow<ReturnType<MembersService['listFirst']>>;
type CompiledRow<Q> = Q extends CompiledQuery<infer Row> ? Row : never;

export class MembersService {
  /** Compiled once: the list is read on every page view of the members screen. */
  private readonly listFirst;
  private readonly listAfter;
  /** The members made of each shared read-mostly answer, once: shared in turn (see list). */
  private readonly members = new WeakMap<readonly ListRow[], readonly Member[]>();

  private readonly db: Kysely<Database>;
  /** Told of each role change and removal once committed (the dashboard ends the member's session tokens). */
  private readonly changeListeners: Array<(orgId: string, userId: string) => Promise<void>> = [];

  constructor(
    private readonly metadata: MetadataStore,
    private readonly clock: Clock,
  ) {
    this.db = metadata.db;
    this.listFirst = precompile((p) => this.listQuery(p('orgId'), p('limit')), ['orgId', 'limit']);
    this.listAfter = precompile(
      (p) => this.listQuery(p('orgId'), p('limit')).where(keysetBefore('m.joined_at', 'm.user_id', [p('joinedAt'), p('userId')])),
      ['orgId', 'limit', 'joinedAt', 'userId'],
    );
  }

  /**
   * Newest first; the keyset is (joined_at, user_id). Read-mostly: membership rarely changes. The
   * answer is shared, like the rows it is made from (the same array until anything is written:
   * Paginator.pageBytes keeps the page's bytes with it), and must not be modified.
   */
  async list(orgId: string, page: PageRequest): Promise<readonly Member[]> {
    const query = page.after
      ? this.listAfter({ orgId, limit: page.limit + 1, joinedAt: String(page.after[0]), userId: String(page.after[1]) })
      : this.listFirst({ orgId, limit: page.limit + 1 });
    const rows = await this.metadata.readMostly(query);
    let members = this.members.get(rows);
    if (!members) this.members.set(rows, (members = this.toMembers(rows)));
    return members;
  }

  private toMembers(rows: readonly ListRow[]): Member[] {
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      email: row.email,
      avatar: row.avatar,
      role: { id: row.role_id, name: row.role_name, isSystem: Number(row.is_system) === 1 },
      joinedAt: row.joined_at,
    }));
  }

  /** Every member, newest first, page after page (opsctl member list). */
  async listAll(orgId: string): Promise<Member[]> {
    const all: Member[] = [];
    const limit = 1000;
    let after: PageRequest['after'];
    for (;;) {
      const rows = await this.list(orgId, { limit, after });
      all.push(...rows.slice(0, limit));
      if (rows.length <= limit) return all;
      const last = all[all.length - 1]!;
      after = [last.joinedAt, last.id];
    }
  }

  /**
   * The organisation's roles, the ids PATCH …/members/{userId} takes: the system roles in their
   * fixed order (Owner, Admin, Developer, Viewer), then any others by name. Not paged: an
   * organisation has a handful.
   */
  async roles(orgId: string): Promise<Role[]> {
    const rows = await this.db.selectFrom('roles').select(['id', 'name', 'is_system']).where('org_id', '=', orgId).execute();
    const order: readonly string[] = systemRoles;
    const rank = (r: { name: string; is_system: number }) => {
      const i = Number(r.is_system) === 1 ? order.indexOf(r.name) : -1;
      return i < 0 ? order.length : i;
    };
    return rows
      .sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((r) => ({ id: r.id, name: r.name, isSystem: Number(r.is_system) === 1 }));
  }

  private listQuery(orgId: string, limit: string) {
    return this.db
      .selectFrom('memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .innerJoin('roles as r', 'r.id', 'm.role_id')
      .select(['u.id', 'u.name', 'u.email', 'u.avatar', 'r.id as role_id', 'r.name as role_name', 'r.is_system', 'm.joined_at'])
      .where('m.org_id', '=', orgId)
      .orderBy('m.joined_at', 'desc')
      .orderBy('m.user_id', 'desc')
      .limit(limit as unknown as number);
  }

  /**
   * `actor`: the member the caller's token acts for, whose role may forbid the change
   * (role-policy.ts: only an Owner changes Owners); absent for tokens acting for nobody.
   * `origin`: who acts, for the audit log (the request's tenant carries it; absent: opsctl).
   */
  async changeRole(orgId: string, userId: string, roleId: string, actor?: ActingMember, origin?: Origin): Promise<void> {
    const changed = await this.db.transaction().execute(async (trx) => {
      await this.lockOrg(trx, orgId);
      const role = await trx.selectFrom('roles').select(['id', 'name']).where('id', '=', roleId).where('org_id', '=', orgId).executeTakeFirst();
      if (!role) throw badRequest(`roleId ${roleId} is not a role of this organisation`);
      const member = await this.memberOf(trx, orgId, userId);
      checkOwnerChange(actor, { currentRole: member.role_name, newRole: role.name });
      if (member.role_id === role.id) return false;
      if (member.role_name === ownerRole && role.name !== ownerRole) await this.checkOwnerMayLeave(trx, orgId, userId, 'demoted');
      await trx.updateTable('memberships').set({ role_id: role.id }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      await audit.record(trx, {
        action: 'member.role_change',
        origin,
        orgId,
        target: { type: 'user', id: userId },
        at: this.clock.now(),
        details: { role: role.name, previous_role: member.role_name },
      });
      return true;
    });
    if (changed) await this.changed(orgId, userId);
  }

  /** `actor` and `origin` as for changeRole. */
  async remove(orgId: string, userId: string, actor?: ActingMember, origin?: Origin): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.lockOrg(trx, orgId);
      const member = await this.memberOf(trx, orgId, userId);
      checkOwnerChange(actor, { currentRole: member.role_name });
      if (member.role_name === ownerRole) await this.checkOwnerMayLeave(trx, orgId, userId, 'removed');
      const org = await trx.selectFrom('organisations').select('primary_owner_id').where('id', '=', orgId).executeTakeFirstOrThrow();
      if (org.primary_owner_id === userId) await this.checkOwnerMayLeave(trx, orgId, userId, 'removed');
      await trx.deleteFrom('memberships').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      await audit.record(trx, { action: 'member.remove', origin, orgId, target: { type: 'user', id: userId }, at: this.clock.now(), details: { role: member.role_name } });
    });
    await this.changed(orgId, userId);
  }

  /**
   * Runs `listener` after each role change (to another role) and each removal has committed;
   * it must not throw (the change is done).
   */
  onChanged(listener: (orgId: string, userId: string) => Promise<void>): void {
    this.changeListeners.push(listener);
  }

  private async changed(orgId: string, userId: string): Promise<void> {
    for (const listener of this.changeListeners) await listener(orgId, userId);
  }

  /**
   * Serialises membership changes of one organisation: on PostgreSQL the UPDATE takes the
   * row lock (so two concurrent demotions cannot both see "another Owner remains"); SQLite
   * already runs one write transaction at a time.
   */
  private async lockOrg(trx: Transaction<Database>, orgId: string): Promise<void> {
    await trx.updateTable('organisations').set({ updated_at: iso(this.clock.now()) }).where('id', '=', orgId).execute();
  }

  private async memberOf(trx: Transaction<Database>, orgId: string, userId: string) {
    const member = await trx
      .selectFrom('memberships as m')
      .innerJoin('roles as r', 'r.id', 'm.role_id')
      .select(['m.user_id', 'm.role_id', 'r.name as role_name'])
      .where('m.org_id', '=', orgId)
      .where('m.user_id', '=', userId)
      .executeTakeFirst();
    if (!member) throw notFound(`user ${userId} is not a member of this organisation`);
    return member;
  }

  private async checkOwnerMayLeave(trx: Transaction<Database>, orgId: string, userId: string, verb: string): Promise<void> {
    const org = await trx.selectFrom('organisations').select('primary_owner_id').where('id', '=', orgId).executeTakeFirstOrThrow();
    if (org.primary_owner_id === userId) {
      throw conflict(`the primary owner cannot be ${verb}; transfer ownership first (opsctl owner transfer)`);
    }
    const owners = await trx
      .selectFrom('memberships as m')
      .innerJoin('roles as r', 'r.id', 'm.role_id')
      .select(sql<number>`count(*)`.as('n'))
      .where('m.org_id', '=', orgId)
      .where('r.name', '=', ownerRole)
      .executeTakeFirstOrThrow();
    if (Number(owners.n) <= 1) {
      throw conflict(`the last Owner cannot be ${verb}; make another member Owner or transfer ownership first`);
    }
  }
}
