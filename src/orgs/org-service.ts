import { type Kysely, type Transaction } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { PlanCatalogue } from '../plans/catalogue.js';
import { badRequest, conflict, notFound } from '../errors/app-error.js';
import { newId } from '../shared/ids.js';
import { iso, type Clock } from '../shared/clock.js';
import { ownerRole, systemRoles } from '../auth/system-roles.js';
import { audit } from '../audit/record.js';
import type { Origin } from '../tenancy/origin.js';

/** An organisation as `opsctl org list` shows it. */
export interface OrgInfo {
  id: string;
  name: string;
  plan: string;
  primary_owner_id: string | null;
  created_at: string;
}

/** A project as `opsctl project list` shows it. */
export interface ProjectInfo {
  id: string;
  org_id: string;
  name: string;
  created_at: string;
}

export interface CreatedOrg {
  org_id: string;
  project_id: string;
  user_id: string;
}

/** Administration of organisations, projects and members (the dashboard operations, via opsctl). */
export class OrgService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly plans: PlanCatalogue,
    private readonly clock: Clock,
  ) {}

  private checkPlan(plan: string): void {
    if (!this.plans.has(plan)) throw badRequest(`unknown plan "${plan}"; known plans: ${this.plans.names().join(', ')}`);
  }

  async createOrg(input: { name: string; plan: string; ownerEmail: string; ownerName?: string }): Promise<CreatedOrg> {
    this.checkPlan(input.plan);
    if (!input.name.trim()) throw badRequest('the organisation name must not be empty');
    return this.db.transaction().execute(async (trx) => {
      const now = iso(this.clock.now());
      const orgId = newId.org();
      await trx
        .insertInto('organisations')
        .values({ id: orgId, name: input.name, plan: input.plan, primary_owner_id: null, created_at: now, updated_at: now })
        .execute();
      for (const name of systemRoles) {
        await trx.insertInto('roles').values({ id: newId.role(), org_id: orgId, name, is_system: 1, created_at: now }).execute();
      }
      const userId = await this.userByEmail(trx, input.ownerEmail, input.ownerName);
      await this.addMembership(trx, orgId, userId, ownerRole);
      await trx.updateTable('organisations').set({ primary_owner_id: userId }).where('id', '=', orgId).execute();
      const projectId = newId.project();
      await trx.insertInto('projects').values({ id: projectId, org_id: orgId, name: 'default', created_at: now }).execute();
      await audit.record(trx, {
        action: 'org.create',
        origin: undefined,
        orgId,
        target: { type: 'organisation', id: orgId },
        at: this.clock.now(),
        details: { name: input.name, plan: input.plan, primary_owner_id: userId, project_id: projectId },
      });
      return { org_id: orgId, project_id: projectId, user_id: userId };
    });
  }

  async setPlan(orgId: string, plan: string): Promise<void> {
    this.checkPlan(plan);
    await this.db.transaction().execute(async (trx) => {
      const before = await trx.selectFrom('organisations').select('plan').where('id', '=', orgId).executeTakeFirst();
      if (!before) throw notFound(`organisation ${orgId} does not exist`);
      const now = this.clock.now();
      await trx.updateTable('organisations').set({ plan, updated_at: iso(now) }).where('id', '=', orgId).execute();
      await audit.record(trx, {
        action: 'org.plan_change',
        origin: undefined,
        orgId,
        target: { type: 'organisation', id: orgId },
        at: now,
        details: { plan, previous_plan: before.plan },
      });
    });
  }

  async createProject(orgId: string, name: string): Promise<{ project_id: string }> {
    await this.requireOrg(this.db, orgId);
    if (!name.trim()) throw badRequest('the project name must not be empty');
    const projectId = newId.project();
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('projects').values({ id: projectId, org_id: orgId, name, created_at: iso(now) }).execute();
      await audit.record(trx, { action: 'project.create', origin: undefined, orgId, projectId, target: { type: 'project', id: projectId }, at: now, details: { name } });
    });
    return { project_id: projectId };
  }

  async projectOf(orgId: string, projectId: string): Promise<void> {
    const row = await this.db.selectFrom('projects').select('id').where('id', '=', projectId).where('org_id', '=', orgId).executeTakeFirst();
    if (!row) throw notFound(`project ${projectId} does not exist in organisation ${orgId}`);
  }

  /** `origin`: who acts, for the audit log (POST /orgs/{orgId}/members passes the request's); absent: opsctl. */
  async addMember(input: { orgId: string; email: string; name?: string; role: string; origin?: Origin }): Promise<{ user_id: string }> {
    return this.db.transaction().execute(async (trx) => {
      await this.requireOrg(trx, input.orgId);
      const userId = await this.userByEmail(trx, input.email, input.name);
      const existing = await trx
        .selectFrom('memberships')
        .select('user_id')
        .where('org_id', '=', input.orgId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (existing) throw conflict(`${input.email} is already a member of this organisation`);
      await this.addMembership(trx, input.orgId, userId, input.role);
      await audit.record(trx, {
        action: 'member.invite',
        origin: input.origin,
        orgId: input.orgId,
        target: { type: 'user', id: userId },
        at: this.clock.now(),
        details: { email: input.email.trim().toLowerCase(), role: input.role },
      });
      return { user_id: userId };
    });
  }

  /** Moves primary ownership to a member, who becomes an Owner if not one already. */
  async transferOwnership(orgId: string, toUserId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.requireOrg(trx, orgId);
      const member = await trx
        .selectFrom('memberships')
        .select('user_id')
        .where('org_id', '=', orgId)
        .where('user_id', '=', toUserId)
        .executeTakeFirst();
      if (!member) throw notFound(`user ${toUserId} is not a member of organisation ${orgId}`);
      const owner = await this.roleByName(trx, orgId, ownerRole);
      await trx.updateTable('memberships').set({ role_id: owner }).where('org_id', '=', orgId).where('user_id', '=', toUserId).execute();
      await trx
        .updateTable('organisations')
        .set({ primary_owner_id: toUserId, updated_at: iso(this.clock.now()) })
        .where('id', '=', orgId)
        .execute();
      await audit.record(trx, { action: 'org.owner_transfer', origin: undefined, orgId, target: { type: 'user', id: toUserId }, at: this.clock.now() });
    });
  }

  /** Every organisation of the installation, oldest first (opsctl org list). */
  async listOrgs(): Promise<OrgInfo[]> {
    return this.db.selectFrom('organisations').select(['id', 'name', 'plan', 'primary_owner_id', 'created_at']).orderBy('created_at').orderBy('id').execute();
  }

  /** Projects of one organisation (404 when it does not exist) or of all, oldest first. */
  async listProjects(orgId?: string): Promise<ProjectInfo[]> {
    let query = this.db.selectFrom('projects').select(['id', 'org_id', 'name', 'created_at']).orderBy('created_at').orderBy('id');
    if (orgId !== undefined) {
      await this.requireOrg(this.db, orgId);
      query = query.where('org_id', '=', orgId);
    }
    return query.execute();
  }

  /** Throws 404 not_found unless the organisation exists. */
  async checkExists(orgId: string): Promise<void> {
    await this.requireOrg(this.db, orgId);
  }

  /** The first organisation, its first project and its primary owner with their e-mail (opsctl init run again). */
  async firstOrg(): Promise<(CreatedOrg & { email: string }) | undefined> {
    const org = await this.db.selectFrom('organisations').select(['id', 'primary_owner_id']).orderBy('created_at').orderBy('id').executeTakeFirst();
    if (!org) return undefined;
    const project = await this.db.selectFrom('projects').select('id').where('org_id', '=', org.id).orderBy('created_at').orderBy('id').executeTakeFirst();
    const owner = org.primary_owner_id ? await this.db.selectFrom('users').select('email').where('id', '=', org.primary_owner_id).executeTakeFirst() : undefined;
    return { org_id: org.id, project_id: project?.id ?? '', user_id: org.primary_owner_id ?? '', email: owner?.email ?? '' };
  }

  private async requireOrg(db: Kysely<Database> | Transaction<Database>, orgId: string): Promise<void> {
    const org = await db.selectFrom('organisations').select('id').where('id', '=', orgId).executeTakeFirst();
    if (!org) throw notFound(`organisation ${orgId} does not exist`);
  }

  private async roleByName(trx: Transaction<Database>, orgId: string, name: string): Promise<string> {
    const role = await trx.selectFrom('roles').select('id').where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
    if (!role) {
      const names = await trx.selectFrom('roles').select('name').where('org_id', '=', orgId).execute();
      throw badRequest(`unknown role "${name}"; roles of this organisation: ${names.map((r) => r.name).join(', ')}`);
    }
    return role.id;
  }

  private async addMembership(trx: Transaction<Database>, orgId: string, userId: string, roleName: string): Promise<void> {
    const roleId = await this.roleByName(trx, orgId, roleName);
    await trx
      .insertInto('memberships')
      .values({ org_id: orgId, user_id: userId, role_id: roleId, joined_at: iso(this.clock.now()) })
      .execute();
  }

  private async userByEmail(trx: Transaction<Database>, email: string, name?: string): Promise<string> {
    const normalised = email.trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+$/.test(normalised)) throw badRequest(`"${email}" is not an e-mail address`);
    const existing = await trx.selectFrom('users').select('id').where('email', '=', normalised).executeTakeFirst();
    if (existing) return existing.id;
    const id = newId.user();
    await trx
      .insertInto('users')
      .values({ id, email: normalised, name: name ?? normalised.split('@')[0]!, avatar: '', created_at: iso(this.clock.now()) })
      .execute();
    return id;
  }
}
