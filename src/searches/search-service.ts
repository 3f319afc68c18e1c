import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import { scoped } from '../tenancy/scoped.js';
import { conflict, notFound } from '../errors/app-error.js';
import { newId } from '../shared/ids.js';
import { iso, type Clock } from '../shared/clock.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import { checkSavedSearch, rangeOf, type SavedSearchInput } from './saved-search.js';
import type { SavedSearchesTable } from './tables.js';
import './tables.js';

/** Saved searches of a project and mode (DECISIONS.md §19), always through scoped(). */
export class SavedSearchService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async create(tenant: Tenant, input: SavedSearchInput): Promise<SavedSearchesTable> {
    const columns = checkSavedSearch(input);
    await this.checkNameFree(tenant, columns.name);
    const now = iso(this.clock.now());
    const row: SavedSearchesTable = { id: newId.savedSearch(), ...scoped(this.db, tenant).row, ...columns, created_at: now, updated_at: now };
    await this.writing(tenant, columns.name, () => this.db.insertInto('saved_searches').values(row).execute());
    return row;
  }

  async get(tenant: Tenant, id: string): Promise<SavedSearchesTable> {
    const row = await scoped(this.db, tenant).selectFrom('saved_searches').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(`no saved search ${id}`);
    return row;
  }

  /** Newest first, `limit + 1` rows after the page's position. */
  async list(tenant: Tenant, page: PageRequest): Promise<SavedSearchesTable[]> {
    let query = scoped(this.db, tenant).selectFrom('saved_searches').selectAll();
    if (page.after) query = query.where(keysetBefore('created_at', 'id', page.after));
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  }

  /** Merges the patch over the stored search and checks the whole again; `range: null` removes the range. */
  async update(tenant: Tenant, id: string, patch: Partial<SavedSearchInput>): Promise<SavedSearchesTable> {
    const row = await this.get(tenant, id);
    const columns = checkSavedSearch({
      name: patch.name ?? row.name,
      q: patch.q ?? row.q,
      range: patch.range === undefined ? rangeOf(row) : patch.range,
    });
    if (columns.name !== row.name) await this.checkNameFree(tenant, columns.name);
    const changes = { ...columns, updated_at: iso(this.clock.now()) };
    await this.writing(tenant, columns.name, () => scoped(this.db, tenant).updateTable('saved_searches').set(changes).where('id', '=', id).execute());
    return { ...row, ...changes };
  }

  async remove(tenant: Tenant, id: string): Promise<void> {
    const result = await scoped(this.db, tenant).deleteFrom('saved_searches').where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) !== 1) throw notFound(`no saved search ${id}`);
  }

  private async checkNameFree(tenant: Tenant, name: string): Promise<void> {
    const taken = await scoped(this.db, tenant).selectFrom('saved_searches').select('id').where('name', '=', name).executeTakeFirst();
    if (taken) throw nameTaken(name);
  }

  /** A write that lost a race on the unique (tenant, name) is the same 409 as the check before it. */
  private async writing(tenant: Tenant, name: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      await this.checkNameFree(tenant, name);
      throw error;
    }
  }
}

const nameTaken = (name: string) => conflict(`a saved search named "${name}" already exists in this project and mode`, { field: 'name' });
