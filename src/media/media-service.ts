import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { AppContext } from '../app/context.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import { BlobStoreUnavailableError, type BlobStore } from '../stores/blobs/blob-store.js';
import { AppError, notFound, storageError } from '../errors/app-error.js';
import type { Tenant } from '../tenancy/tenant.js';
import { newId } from '../shared/ids.js';
import { iso } from '../shared/clock.js';
import { FilesRepo } from './files-repo.js';
import { UploadReservations } from './reservations.js';
import { Inspector } from './inspector.js';
import { fileLimit } from './limits.js';
import { newStorageKey } from './names.js';
import { isSupportedType, normaliseType, type SupportedType } from './sniff.js';
import { toView, type FileView } from './file-record.js';
import type { RecordAnswer } from '../idempotency/keyed-request.js';

export const retentionMs = 30 * 24 * 60 * 60 * 1000;

export interface IncomingFile {
  tenant: Tenant;
  plan: string;
  /** The declared Content-Type as sent, or undefined when the bytes decide. */
  declaredType: string | undefined;
  originalName: string;
  body: Readable;
  /** An upper bound on the size known in advance (Content-Length, decoded length): reserves less quota. */
  sizeHint?: number;
  oversizeCode: 'file_too_large' | 'too_large';
}

/** A file whose bytes are stored and counted, waiting for its record (fields may follow it). */
export interface StoredFile {
  /** `within` runs in the transaction that commits the file's record (a keyed request's answer: src/idempotency). */
  commit(meta: { folder: string; tags: string[] }, within?: RecordAnswer<FileView>): Promise<FileView>;
  /** Gives back everything when the request fails after the bytes were stored. */
  abort(): Promise<void>;
}

export class MediaService {
  readonly files: FilesRepo;
  readonly reservations: UploadReservations;

  constructor(
    private readonly ctx: AppContext,
    readonly blobs: BlobStore,
    /** Where file urls point (the delivery listener). */
    readonly urls: PublicUrls,
  ) {
    this.files = new FilesRepo(ctx.metadata);
    this.reservations = new UploadReservations(ctx.metadata.db, ctx.quotas, ctx.clock);
  }

  /** A declared type we accept, or 415 before a byte is read or any quota reserved. */
  checkDeclared(raw: string): SupportedType {
    const type = normaliseType(raw);
    if (!isSupportedType(type)) {
      throw new AppError('unsupported_type', `content type ${type || '(empty)'} is not supported; send image/png, image/jpeg, image/gif, image/webp, video/mp4, video/webm or application/pdf`, { declared: type, detected: null });
    }
    return type;
  }

  /**
   * Streams a file to the blob store. Quota is reserved first (the limit, or the smaller
   * known size) so concurrent uploads can never pass it together, then settled to the real
   * size; any failure releases the reservation and leaves no blob. The reservation is a row
   * (UploadReservations), so a crash at any point cannot keep quota or a blob forever.
   */
  async store(incoming: IncomingFile): Promise<StoredFile> {
    const { tenant, plan } = incoming;
    const declared = incoming.declaredType === undefined ? undefined : this.checkDeclared(incoming.declaredType);
    const limitFor = (type: SupportedType | undefined) => fileLimit(this.ctx.plans, plan, type);
    // One more byte than the limit is enough to tell an oversize file, so that is the most to reserve.
    const reserved = Math.min(limitFor(declared) + 1, incoming.sizeHint ?? Number.MAX_SAFE_INTEGER);
    const key = newStorageKey(incoming.originalName);
    const reservation = await this.reservations.reserve(tenant.orgId, plan, key, reserved);
    const inspector = new Inspector({ declared, limitFor, oversizeCode: incoming.oversizeCode });
    // allSettled, not all: the temp file must be gone before the error is answered. A write
    // that fails before reading everything destroys the inspector, so the read cannot hang.
    const writing = this.blobs.put(key, inspector).catch((error: unknown) => {
      inspector.destroy();
      throw error;
    });
    const [read, write] = await Promise.allSettled([pipeline(incoming.body, inspector), writing]);
    if (read.status === 'rejected' || write.status === 'rejected') {
      await this.reservations.release(reservation);
      throw uploadFailure(read, write);
    }
    const size = inspector.size;
    const abort = async () => {
      // A store that is down keeps the blob for now: with its reservation gone no record knows
      // the key, so the purge job's sweep removes it once the store is back.
      await this.blobs.delete(key).catch((error: unknown) => {
        if (!(error instanceof BlobStoreUnavailableError)) throw error;
      });
      await this.reservations.release(reservation);
    };
    if (!(await this.reservations.settle(reservation, size))) {
      await abort();
      throw storageError();
    }
    const sha256 = inspector.digest();
    const type = inspector.detected!;
    return {
      abort,
      commit: async ({ folder, tags }, within) => {
        const now = iso(this.ctx.clock.now());
        const row = {
          id: newId.file(),
          org_id: tenant.orgId,
          project_id: tenant.projectId,
          mode: tenant.mode,
          key,
          size,
          content_type: type,
          sha256,
          original_name: incoming.originalName,
          tags: JSON.stringify(tags),
          folder,
          abuse_status: 'clean' as const,
          visibility: 'public' as const,
          storage_class: 'standard' as const,
          created_at: now,
          updated_at: now,
          deleted_at: null,
          purges_at: null,
        };
        const view = toView(row, this.urls.cdn);
        let committed: boolean;
        try {
          committed = await this.reservations.commit(reservation, row, within && ((trx) => within(trx, view)));
        } catch (error) {
          await abort();
          throw error;
        }
        if (!committed) {
          await abort();
          throw storageError();
        }
        return view;
      },
    };
  }

  async get(tenant: Tenant, id: string): Promise<FileView> {
    const row = await this.files.get(tenant, id);
    if (!row) throw notFound(`no file ${id}`);
    return toView(row, this.urls.cdn);
  }

  async softDelete(tenant: Tenant, id: string): Promise<{ id: string; deleted: true; purges_at: string }> {
    const now = this.ctx.clock.now();
    const purgesAt = iso(now + retentionMs);
    if (!(await this.files.softDelete(tenant, id, iso(now), purgesAt))) throw notFound(`no file ${id}`);
    return { id, deleted: true, purges_at: purgesAt };
  }

  /**
   * POST /media/{id}/restore: the tenant's soft-deleted file back within its window, or its
   * active file as it is (restoring twice changes nothing). Storage usage is unchanged either
   * way: a soft-deleted file counts until it is purged.
   */
  async restore(tenant: Tenant, id: string): Promise<FileView> {
    const row = await this.files.restore(tenant, id, iso(this.ctx.clock.now()));
    if (!row) throw notFound(`no file ${id}, or its 30-day window has passed`);
    return toView(row, this.urls.cdn);
  }

  /** System path (`opsctl media restore`): any tenant's soft-deleted file, within its window. */
  async restoreAnyTenant(id: string): Promise<FileView> {
    const row = await this.files.restoreAnyTenant(id, iso(this.ctx.clock.now()));
    if (!row) throw notFound(`no soft-deleted file ${id} inside its 30-day window`);
    return toView(row, this.urls.cdn);
  }

  /**
   * Removes files past their window. Safe from several processes at once: the blob delete is
   * idempotent and the row delete is conditional, so exactly one process releases the quota.
   */
  async purge(): Promise<{ purged: number; bytes: number; reclaimed: number }> {
    let purged = 0;
    let bytes = 0;
    for (;;) {
      const now = iso(this.ctx.clock.now());
      const due = await this.files.due(now, 100);
      for (const row of due) {
        await this.blobs.delete(row.key);
        if (await this.files.claimPurged(row, now)) {
          await this.ctx.quotas.release(row.org_id, 'storage_bytes', Number(row.size));
          purged++;
          bytes += Number(row.size);
        }
      }
      if (due.length < 100) break;
    }
    await this.blobs.sweep(this.knownKeys);
    const reclaimed = await this.reservations.reclaim(this.blobs);
    return { purged, bytes, reclaimed };
  }

  /**
   * For the blob store's sweep: which of these keys a file record (soft-deleted ones included)
   * or an upload in flight still holds. System path, across tenants.
   */
  readonly knownKeys = async (keys: string[]): Promise<Set<string>> => {
    const known = new Set<string>();
    for (let i = 0; i < keys.length; i += 500) {
      const chunk = keys.slice(i, i + 500);
      const db = this.ctx.metadata.db;
      const files = await db.selectFrom('files').select('key').where('key', 'in', chunk).execute();
      const held = await db.selectFrom('upload_reservations').select('key').where('key', 'in', chunk).execute();
      for (const row of [...files, ...held]) known.add(row.key);
    }
    return known;
  };
}

/** 503 storage_error for a store that cannot serve: the client may retry in a few seconds. */
export function storeUnavailable(error: BlobStoreUnavailableError, what: string): AppError {
  return Object.assign(storageError(`${what}: ${error.reason}; retry in a few seconds`, 5), { cause: error });
}

/**
 * Which side failed an upload. The inspector's verdicts (413, 415) are AppErrors. A failure of
 * the body itself (malformed multipart, a client gone or cut off by a timeout) reaches the blob
 * write as the very same error, through the inspector the pipeline destroyed with it: that is
 * the client's, rethrown as is for the route to answer. Only a write that failed on its own is
 * 503 storage_error: a client must not be told to retry a request that cannot succeed.
 */
function uploadFailure(read: PromiseSettledResult<unknown>, write: PromiseSettledResult<unknown>): unknown {
  const readError = read.status === 'rejected' ? (read.reason as unknown) : undefined;
  const writeError = write.status === 'rejected' ? (write.reason as unknown) : undefined;
  const verdict = [readError, writeError].find((e) => e instanceof AppError);
  if (verdict) return verdict;
  if (readError !== undefined && (writeError === undefined || writeError === readError)) return readError;
  if (writeError instanceof BlobStoreUnavailableError) return storeUnavailable(writeError, 'the file was not stored');
  return Object.assign(storageError(), { cause: writeError });
}
