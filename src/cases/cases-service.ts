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
import { toView, type FileView } from '../media/file-record.js';
import type { FilesTable } from '../media/files-table.js';
import '../media/files-table.js';
import type { CaseStatus, CasesTable } from './cases-table.js';
import './cases-table.js';

export interface CaseView {
  id: string;
  title: string;
  description: string;
  status: CaseStatus;
  attachments: FileView[];
  created_at: string;
  updated_at: string;
}

export interface CasePatch {
  title?: string;
  description?: string;
  status?: CaseStatus;
}

/**
 * Status transitions (SPEC.md §3.3 leaves them open; DECISIONS.md §13 and docs): open ↔ closed,
 * closed → archived. Archived is final: an archived case takes no change at all.
 */
const allowed: Record<CaseStatus, readonly CaseStatus[]> = {
  open: ['closed'],
  closed: ['open', 'archived'],
  archived: [],
};

const caseNotFound = (id: string) => notFound(`no case ${id}`);

/** Cases of one tenant, with their attachments (File objects of the same project and mode). */
export class CasesService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly cdnUrl: () => string,
  ) {}

  async create(tenant: Tenant, title: string, description: string): Promise<CaseView> {
    const now = iso(this.clock.now());
    const row: CasesTable = { id: newId.case(), ...scoped(this.db, tenant).row, title, description, status: 'open', created_at: now, updated_at: now };
    await this.db.insertInto('cases').values(row).execute();
    return this.view(row, []);
  }

  async get(tenant: Tenant, id: string): Promise<CaseView> {
    const row = await this.row(tenant, id);
    if (!row) throw caseNotFound(id);
    const files = await this.attachments(tenant, [row.id]);
    return this.view(row, files.get(row.id) ?? []);
  }

  /** Newest first, `limit + 1` rows after the page's position. */
  async list(tenant: Tenant, page: PageRequest, status: CaseStatus | undefined): Promise<CaseView[]> {
    let query = scoped(this.db, tenant).selectFrom('cases').selectAll();
    if (status) query = query.where('status', '=', status);
    if (page.after) {
      query = query.where(keysetBefore('created_at', 'id', page.after));
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
    const files = await this.attachments(tenant, rows.map((r) => r.id));
    return rows.map((r) => this.view(r, files.get(r.id) ?? []));
  }

  async update(tenant: Tenant, id: string, patch: CasePatch): Promise<CaseView> {
    // Optimistic: the update only applies to the status it was checked against, so two
    // concurrent transitions cannot both pass (the loser re-reads and is judged again).
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.row(tenant, id);
      if (!current) throw caseNotFound(id);
      const next = { ...current, ...definedOnly(patch) };
      const changes = next.title !== current.title || next.description !== current.description || next.status !== current.status;
      if (!changes) return this.get(tenant, id);
      if (current.status === 'archived') throw conflict(`case ${id} is archived; an archived case is final and cannot be changed`);
      if (next.status !== current.status && !allowed[current.status].includes(next.status)) {
        throw conflict(`a case cannot go from ${current.status} to ${next.status}; allowed: open ↔ closed, closed → archived`, {
          status: current.status,
        });
      }
      const result = await scoped(this.db, tenant)
        .updateTable('cases')
        .set({ title: next.title, description: next.description, status: next.status, updated_at: iso(this.clock.now()) })
        .where('id', '=', id)
        .where('status', '=', current.status)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return this.get(tenant, id);
    }
    throw conflict(`case ${id} is being changed concurrently; retry`);
  }

  /** Attaches an active file of the same tenant; attaching it again changes nothing. */
  async attach(tenant: Tenant, id: string, fileId: string): Promise<CaseView> {
    const current = await this.row(tenant, id);
    if (!current) throw caseNotFound(id);
    const file = await scoped(this.db, tenant).selectFrom('files').select('id').where('id', '=', fileId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!file) throw notFound(`no file ${fileId}`);
    if (current.status === 'archived') throw conflict(`case ${id} is archived; an archived case is final and cannot be changed`);
    const now = iso(this.clock.now());
    const inserted = await this.db
      .insertInto('case_attachments')
      .values({ ...scoped(this.db, tenant).row, case_id: id, file_id: fileId, attached_at: now })
      .onConflict((oc) => oc.columns(['case_id', 'file_id']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) {
      await scoped(this.db, tenant).updateTable('cases').set({ updated_at: now }).where('id', '=', id).execute();
    }
    return this.get(tenant, id);
  }

  private row(tenant: Tenant, id: string): Promise<CasesTable | undefined> {
    return scoped(this.db, tenant).selectFrom('cases').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Active files attached to the given cases, in attachment order. Joined at read time: a
   * soft-deleted file is gone from every case's attachments at once (and is back if it is
   * restored within its window), with no hook in the media delete path.
   */
  private async attachments(tenant: Tenant, caseIds: string[]): Promise<Map<string, FileView[]>> {
    const byCase = new Map<string, FileView[]>();
    if (!caseIds.length) return byCase;
    const links = await scoped(this.db, tenant)
      .selectFrom('case_attachments')
      .select(['case_id', 'file_id'])
      .where('case_id', 'in', caseIds)
      .orderBy('attached_at', 'asc')
      .orderBy('file_id', 'asc')
      .execute();
    if (!links.length) return byCase;
    const fileIds = [...new Set(links.map((l) => l.file_id))];
    const files: FilesTable[] = await scoped(this.db, tenant).selectFrom('files').selectAll().where('id', 'in', fileIds).where('deleted_at', 'is', null).execute();
    const views = new Map(files.map((f) => [f.id, toView(f, this.cdnUrl())]));
    for (const link of links) {
      const view = views.get(link.file_id);
      if (!view) continue;
      let list = byCase.get(link.case_id);
      if (!list) byCase.set(link.case_id, (list = []));
      list.push(view);
    }
    return byCase;
  }

  private view(row: CasesTable, attachments: FileView[]): CaseView {
    return {
      id: row.id,
      title: row.title,
      description: row.description,
      status: row.status,
      attachments,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }
}

function definedOnly(patch: CasePatch): CasePatch {
  const out: CasePatch = {};
  if (patch.title !== undefined) out.title = patch.title;
  if (patch.description !== undefined) out.description = patch.description;
  if (patch.status !== undefined) out.status = patch.status;
  return out;
}
