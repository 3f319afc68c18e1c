import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Clock } from '../shared/clock.js';
import { iso } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { scoped } from '../tenancy/scoped.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import { conflict, notFound } from '../errors/app-error.js';
import type { AppsTable } from './apps-table.js';
import './apps-table.js';

export interface AppView {
  id: string;
  name: string;
  description: string;
  created_at: string;
}

const toView = (row: AppsTable): AppView => ({ id: row.id, name: row.name, description: row.description, created_at: row.created_at });

/** Submitted apps of one tenant. */
export class AppsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async create(tenant: Tenant, name: string, description: string): Promise<AppView> {
    const taken = () => conflict(`an app named "${name}" already exists in this project`, { name });
    const existing = await scoped(this.db, tenant).selectFrom('apps').select('id').where('name', '=', name).executeTakeFirst();
    if (existing) throw taken();
    const row: AppsTable = { id: newId.app(), ...scoped(this.db, tenant).row, name, description, created_at: iso(this.clock.now()) };
    try {
      await this.db.insertInto('apps').values(row).execute();
    } catch (error) {
      // Lost a race on the unique (tenant, name) index.
      const raced = await scoped(this.db, tenant).selectFrom('apps').select('id').where('name', '=', name).executeTakeFirst();
      if (raced) throw taken();
      throw error;
    }
    return toView(row);
  }

  async get(tenant: Tenant, id: string): Promise<AppView> {
    const row = await scoped(this.db, tenant).selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(`no app ${id}`);
    return toView(row);
  }

  /** Newest first, `limit + 1` rows after the page's position. */
  async list(tenant: Tenant, page: PageRequest): Promise<AppView[]> {
    let query = scoped(this.db, tenant).selectFrom('apps').selectAll();
    if (page.after) query = query.where(keysetBefore('created_at', 'id', page.after));
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
    return rows.map(toView);
  }
}
