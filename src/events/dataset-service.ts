import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { MetadataStore } from '../stores/metadata/database.js';
import { precompile } from '../stores/metadata/precompiled.js';
import type { PlanCatalogue } from '../plans/catalogue.js';
import type { Clock } from '../shared/clock.js';
import { iso } from '../shared/clock.js';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import { scoped } from '../tenancy/scoped.js';
import { newId } from '../shared/ids.js';
import { AppError, badRequest, conflict, notFound } from '../errors/app-error.js';
import type { Severity } from '../shared/event-record.js';
import type { DatasetsTable } from './datasets-table.js';
import './datasets-table.js';
import type { RecordAnswer } from '../idempotency/keyed-request.js';
import { KeyedLock } from '../shared/keyed-lock.js';
import { audit, inTenant } from '../audit/record.js';

export type Dataset = Selectable<DatasetsTable>;

/** The reserved dataset overflowing events go to (DECISIONS §9). */
export const defaultDatasetName = 'default';
/** SPEC §2.3. */
export const datasetNamePattern = '^(?:[a-z0-9][a-z0-9_-]{0,62}[a-z0-9]|[a-z0-9])$';

export interface DatasetPatch {
  name?: string;
  retention_days?: number;
  default_severity?: Severity | null;
}

/**
 * Where an ingest request's events for one dataset name go, resolved without writing anything:
 * the existing dataset, or (`pending`) the row the write that stores the first event will insert.
 */
export interface IngestTarget {
  /** The dataset; when `pending`, the row to insert (its id is already the events' datasetId). */
  dataset: Dataset;
  /** Set when the cap made the events overflow into `default`: the intended name. */
  overflowFrom: string | undefined;
  /** True when `dataset` does not exist yet: createWith inserts it in the write that stores its first event. */
  pending: boolean;
}

/** A name's target, or why it takes no events (an archived dataset: 409 `conflict`). */
export type ResolvedTarget = IngestTarget | AppError;

/** What a write that creates datasets does in their transaction: builds and charges its events. */
export type CreatingWrite<T> = (
  trx: Kysely<Database>,
  /** The targets as they hold in the transaction: `planned` itself when nothing moved. */
  settled: ReadonlyMap<string, ResolvedTarget>,
) => Promise<{ value: T; datasetIds: ReadonlySet<string> }>;

const cacheTtlMs = 5_000;

/**
 * Writes the organisation's row, unchanged: the first statement of every transaction that creates
 * a dataset, so creations of one organisation queue on it (a row lock on PostgreSQL, the write
 * lock on SQLite) and each counts the others' datasets toward the cap.
 */
const lockOrganisation = (trx: Kysely<Database>, orgId: string) =>
  trx.updateTable('organisations').set((eb) => ({ plan: eb.ref('plan') })).where('id', '=', orgId).execute();

/** Datasets: metadata rows in the tenant's scope; events live in the event store. */
export class DatasetService {
  private readonly targets = new Map<string, { target: IngestTarget; expires: number }>();
  private readonly orgLock = new KeyedLock();
  private readonly db: Kysely<Database>;
  /** Compiled once: GET /datasets and every POST /query read it. */
  private readonly listActiveQuery;

  constructor(
    private readonly metadata: Pick<MetadataStore, 'db' | 'readMostly'>,
    private readonly plans: PlanCatalogue,
    private readonly clock: Clock,
  ) {
    this.db = metadata.db;
    this.listActiveQuery = precompile(
      (p) =>
        scoped(this.db, { orgId: p('orgId'), projectId: p('projectId'), mode: p('mode') as Tenant['mode'] })
          .selectFrom('datasets')
          .selectAll()
          .where('archived_at', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc'),
      ['orgId', 'projectId', 'mode'],
    );
  }


  private invalidate(): void {
    this.targets.clear();
  }

  async find(tenant: Tenant, name: string): Promise<Dataset | undefined> {
    return scoped(this.db, tenant).selectFrom('datasets').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /** An active dataset by name, or 404 (archived ones no longer exist for readers). */
  async getActive(tenant: Tenant, name: string): Promise<Dataset> {
    const dataset = await this.find(tenant, name);
    if (!dataset || dataset.archived_at) throw notFound(`no dataset named "${name}"`);
    return dataset;
  }

  /**
   * Read-mostly (MetadataStore.readMostly): datasets change far less often than they are listed
   * and queried, and on SQLite the answer is read again once anything is written. The rows are
   * shared between requests and must not be modified.
   */
  async listActive(tenant: Tenant): Promise<readonly Dataset[]> {
    return this.metadata.readMostly(this.listActiveQuery({ orgId: tenant.orgId, projectId: tenant.projectId, mode: tenant.mode }));
  }

  /** id → name for the tenant's datasets (archived included), for StoredEvent.dataset. */
  async namesOf(tenant: Tenant, ids: readonly string[]): Promise<Map<string, string>> {
    if (!ids.length) return new Map();
    const rows = await scoped(this.db, tenant).selectFrom('datasets').select(['id', 'name']).where('id', 'in', [...ids]).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /** Active datasets of the organisation that count toward the plan cap (all projects and modes). */
  private async countTowardCap(orgId: string, db: Kysely<Database> = this.db): Promise<number> {
    // An organisation-wide count, not a read of tenant rows: the cap is the organisation's.
    const row = await db
      .selectFrom('datasets')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('archived_at', 'is', null)
      .where('is_default', '=', 0)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /**
   * POST /datasets' insert: only while the organisation has fewer than `cap` datasets counting
   * toward it ('full' otherwise, with the count). The cap holds across processes and hosts: the
   * count and the insert run in one transaction that first writes the organisation's row (a row
   * lock on PostgreSQL, the database's write lock on SQLite), as every creation of a dataset does
   * (createWith too), so a creation in another process waits for this one's commit and counts its
   * dataset; the in-process lock only keeps this process's creations from queueing on it.
   * `within` runs in the same transaction (a keyed request's answer: src/idempotency).
   */
  private async insert(
    tenant: Tenant,
    plan: string,
    name: string,
    fields: Omit<DatasetPatch, 'name'>,
    cap: number | null,
    within?: RecordAnswer<Dataset>,
  ): Promise<Dataset | { full: number }> {
    const row = this.newRow(tenant, plan, name, fields);
    let result: Dataset | { full: number };
    try {
      result = await this.db.transaction().execute(async (trx) => {
        await lockOrganisation(trx, tenant.orgId);
        if (cap !== null) {
          const used = await this.countTowardCap(tenant.orgId, trx);
          if (used >= cap) return { full: used };
        }
        await this.insertRow(trx, tenant, row, false);
        if (within) await within(trx, row);
        return row;
      });
    } catch (error) {
      // Lost a race on the unique (tenant, name): the other insert's row is the dataset.
      const existing = await this.find(tenant, name);
      if (existing) return existing;
      throw error;
    }
    if ('full' in result) return result;
    this.invalidate();
    return row;
  }

  /**
   * Where events sent to `name` go, without creating anything (a refused request must leave no
   * dataset behind, DECISIONS.md §9 and docs/decisions.md "Datasets are created by a stored
   * event"); archived → 409. An existing target is cached for a few seconds, so the write path
   * reads no metadata per request once the dataset exists; a pending one is read again each time.
   */
  async resolveTarget(tenant: Tenant, plan: string, name: string): Promise<IngestTarget> {
    const key = `${tenantKey(tenant)}|${name}`;
    const cached = this.targets.get(key);
    if (cached && cached.expires > this.clock.now()) return cached.target;
    const target = await this.decide(this.db, tenant, plan, name, { rows: new Map() });
    if (!target.pending) this.targets.set(key, { target, expires: this.clock.now() + cacheTtlMs });
    return target;
  }

  /**
   * One name's target as the datasets stand in `db`. `state` carries a decision's context: the
   * cap count so far (rows this transaction will insert included) and the rows planned per name,
   * reused so that a target that did not move keeps the id its events were built with.
   */
  private async decide(
    db: Kysely<Database>,
    tenant: Tenant,
    plan: string,
    name: string,
    state: { used?: number; rows: Map<string, Dataset> },
  ): Promise<IngestTarget> {
    const existing = await scoped(db, tenant).selectFrom('datasets').selectAll().where('name', '=', name).executeTakeFirst();
    if (existing) {
      if (existing.archived_at) throw conflict(`dataset "${name}" is archived and accepts no events`);
      return { dataset: existing, overflowFrom: undefined, pending: false };
    }
    const planned = (wanted: string): Dataset => {
      let row = state.rows.get(wanted);
      if (!row) state.rows.set(wanted, (row = this.newRow(tenant, plan, wanted, {})));
      return row;
    };
    if (name === defaultDatasetName) return { dataset: planned(name), overflowFrom: undefined, pending: true };
    const cap = this.plans.limits(plan).datasets;
    state.used ??= cap === null ? 0 : await this.countTowardCap(tenant.orgId, db);
    if (cap === null || state.used < cap) return { dataset: planned(name), overflowFrom: undefined, pending: true };
    const fallback = await scoped(db, tenant).selectFrom('datasets').selectAll().where('name', '=', defaultDatasetName).executeTakeFirst();
    if (fallback) return { dataset: fallback, overflowFrom: name, pending: false };
    return { dataset: planned(defaultDatasetName), overflowFrom: name, pending: true };
  }

  /**
   * Creates the pending datasets a write's events go to, in the one transaction that also builds
   * and charges those events (`write`), so that a refusal there (402) leaves no dataset and no
   * audit entry. The targets are decided again in the transaction, after it wrote the
   * organisation's row (a row lock on PostgreSQL, the write lock on SQLite), so the cap holds
   * across processes and two first writes to one new name create it once: the second finds the
   * first's row. When a target moved (another request created the name, the cap filled or
   * freed up), `write` gets the settled targets and rebuilds its events for them; only the
   * planned rows its events then go to are inserted. `needed` names the targets the planned
   * events go to; the others stay as planned and are not created.
   */
  async createWith<T>(
    tenant: Tenant,
    plan: string,
    planned: ReadonlyMap<string, ResolvedTarget>,
    needed: ReadonlySet<string>,
    write: CreatingWrite<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.orgLock.run(tenant.orgId, () => this.createOnce(tenant, plan, planned, needed, write));
      } catch (error) {
        // A unique (tenant, name) violated by an insert that did not queue on the organisation's
        // row: the next attempt finds that row and settles onto it. A refusal (402…) is final.
        if (error instanceof AppError || attempt === 3) throw error;
        const taken = await Promise.all([...needed].map((name) => this.find(tenant, name)));
        if (!taken.some(Boolean)) throw error;
      }
    }
  }

  private async createOnce<T>(
    tenant: Tenant,
    plan: string,
    planned: ReadonlyMap<string, ResolvedTarget>,
    needed: ReadonlySet<string>,
    write: CreatingWrite<T>,
  ): Promise<T> {
    let created = false;
    const value = await this.db.transaction().execute(async (trx) => {
      await lockOrganisation(trx, tenant.orgId);
      const state: { used?: number; rows: Map<string, Dataset> } = { rows: new Map() };
      for (const target of planned.values()) if (!(target instanceof AppError) && target.pending) state.rows.set(target.dataset.name, target.dataset);
      let settled: Map<string, ResolvedTarget> | undefined;
      const inserting: Dataset[] = [];
      for (const name of needed) {
        const before = planned.get(name)!;
        let now: ResolvedTarget;
        try {
          now = await this.decide(trx, tenant, plan, name, state);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          now = error;
        }
        if (!(now instanceof AppError) && now.pending && now.overflowFrom === undefined && name !== defaultDatasetName) state.used! += 1;
        if (!(now instanceof AppError) && now.pending) inserting.push(now.dataset);
        const moved = before instanceof AppError || now instanceof AppError || before.dataset.id !== now.dataset.id || before.overflowFrom !== now.overflowFrom;
        if (moved) (settled ??= new Map(planned)).set(name, now);
      }
      const { value, datasetIds } = await write(trx, settled ?? planned);
      const at = this.clock.now();
      const inserted = new Set<string>();
      for (const row of inserting) {
        if (!datasetIds.has(row.id) || inserted.has(row.id)) continue;
        inserted.add(row.id);
        await this.insertRow(trx, tenant, { ...row, created_at: iso(at), updated_at: iso(at) }, true);
      }
      created = inserted.size > 0;
      return value;
    });
    if (created) this.invalidate();
    return value;
  }

  /** A dataset row as an insert writes it. */
  private newRow(tenant: Tenant, plan: string, name: string, fields: Omit<DatasetPatch, 'name'>): Dataset {
    const now = iso(this.clock.now());
    return {
      id: newId.dataset(),
      ...scoped(this.db, tenant).row,
      name,
      retention_days: fields.retention_days ?? this.plans.limits(plan).retention_days,
      default_severity: fields.default_severity ?? null,
      is_default: name === defaultDatasetName ? 1 : 0,
      archived_at: null,
      hot_keys: null,
      created_at: now,
      updated_at: now,
    };
  }

  /** Inserts the row with its `dataset.create` audit entry, in the caller's transaction. */
  private async insertRow(trx: Kysely<Database>, tenant: Tenant, row: Dataset, byIngest: boolean): Promise<void> {
    await trx.insertInto('datasets').values(row).execute();
    await audit.record(trx, {
      action: 'dataset.create',
      ...inTenant(tenant),
      target: { type: 'dataset', id: row.id },
      at: Date.parse(row.created_at),
      // by_ingest: made by the first event stored under the name (DECISIONS.md §9), not by POST /datasets.
      details: { name: row.name, retention_days: row.retention_days, default_severity: row.default_severity, by_ingest: byIngest },
    });
  }

  private checkRetention(plan: string, days: number | undefined): void {
    if (days === undefined) return;
    const max = this.plans.limits(plan).retention_days;
    if (days > max) throw badRequest(`retention_days may not exceed the plan's retention of ${max} days`, { max_retention_days: max });
  }

  async create(tenant: Tenant, plan: string, input: { name: string } & Omit<DatasetPatch, 'name'>, within?: RecordAnswer<Dataset>): Promise<Dataset> {
    this.checkRetention(plan, input.retention_days);
    if (input.name === defaultDatasetName) throw conflict(`"${defaultDatasetName}" is reserved for the system-managed dataset`);
    return this.orgLock.run(tenant.orgId, async () => {
      const existing = await this.find(tenant, input.name);
      if (existing) {
        throw conflict(existing.archived_at ? `dataset name "${input.name}" belongs to an archived dataset` : `dataset "${input.name}" already exists`);
      }
      const cap = this.plans.limits(plan).datasets;
      const inserted = await this.insert(tenant, plan, input.name, input, cap, within);
      if ('full' in inserted) {
        throw new AppError('quota_exceeded', `the plan allows ${cap} datasets and all are in use; archive one or upgrade the plan`, {
          metric: 'datasets',
          quotas: [{ metric: 'datasets', used: inserted.full, limit: cap, cumulative: true }],
        });
      }
      return inserted;
    });
  }

  async update(tenant: Tenant, plan: string, name: string, patch: DatasetPatch): Promise<Dataset> {
    const dataset = await this.getActive(tenant, name);
    this.checkRetention(plan, patch.retention_days);
    const renaming = patch.name !== undefined && patch.name !== dataset.name;
    if (renaming && dataset.is_default) throw conflict(`the "${defaultDatasetName}" dataset cannot be renamed`);
    if (renaming && patch.name === defaultDatasetName) throw conflict(`"${defaultDatasetName}" is reserved for the system-managed dataset`);
    if (renaming && (await this.find(tenant, patch.name!))) throw conflict(`dataset name "${patch.name}" is taken`);
    const changes: Partial<Dataset> = { updated_at: iso(this.clock.now()) };
    if (renaming) changes.name = patch.name!;
    if (patch.retention_days !== undefined) changes.retention_days = patch.retention_days;
    if (patch.default_severity !== undefined) changes.default_severity = patch.default_severity;
    try {
      await this.db.transaction().execute(async (trx) => {
        await scoped(trx, tenant).updateTable('datasets').set(changes).where('id', '=', dataset.id).execute();
        const { updated_at: _, ...changed } = changes;
        await audit.record(trx, {
          action: 'dataset.update',
          ...inTenant(tenant),
          target: { type: 'dataset', id: dataset.id },
          at: Date.parse(changes.updated_at!),
          details: { ...changed, name: changes.name ?? dataset.name, ...(renaming ? { previous_name: dataset.name } : {}) },
        });
      });
    } catch (error) {
      if (renaming && (await this.find(tenant, patch.name!))) throw conflict(`dataset name "${patch.name}" is taken`);
      throw error;
    }
    this.invalidate();
    return { ...dataset, ...changes };
  }

  async archive(tenant: Tenant, name: string): Promise<Dataset> {
    const dataset = await this.getActive(tenant, name);
    if (dataset.is_default) throw conflict(`the "${defaultDatasetName}" dataset cannot be archived`);
    const now = iso(this.clock.now());
    await this.db.transaction().execute(async (trx) => {
      await scoped(trx, tenant).updateTable('datasets').set({ archived_at: now, updated_at: now }).where('id', '=', dataset.id).execute();
      await audit.record(trx, { action: 'dataset.archive', ...inTenant(tenant), target: { type: 'dataset', id: dataset.id }, at: Date.parse(now), details: { name: dataset.name } });
    });
    this.invalidate();
    return { ...dataset, archived_at: now };
  }

  /**
   * The shortest retention, in days, of the tenant's active datasets, capped by the plan's as the
   * retention job caps it (null without active datasets): the monitors' window counts rely on no
   * event of a window being deleted while it is counted (src/monitors/window-counts.ts).
   */
  async shortestActiveRetentionDays(tenant: Tenant): Promise<number | null> {
    const rows = await scoped(this.db, tenant).selectFrom('datasets').select('retention_days').where('archived_at', 'is', null).execute();
    if (!rows.length) return null;
    const org = await this.db.selectFrom('organisations').select('plan').where('id', '=', tenant.orgId).executeTakeFirst();
    const cap = org ? this.plans.limits(org.plan).retention_days : 0;
    return Math.min(cap, ...rows.map((r) => r.retention_days));
  }

  /** Every dataset with its organisation's plan: the retention job's work list (system-wide). */
  async allForRetention(): Promise<Array<{ tenant: Tenant; id: string; retentionDays: number }>> {
    const rows = await this.db
      .selectFrom('datasets')
      .innerJoin('organisations', 'organisations.id', 'datasets.org_id')
      .select(['datasets.id', 'datasets.org_id', 'datasets.project_id', 'datasets.mode', 'datasets.retention_days', 'organisations.plan'])
      .execute();
    return rows.map((r) => ({
      tenant: { orgId: r.org_id, projectId: r.project_id, mode: r.mode },
      id: r.id,
      retentionDays: Math.min(r.retention_days, this.plans.limits(r.plan).retention_days),
    }));
  }
}
