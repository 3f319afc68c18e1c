import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { QuotaService } from '../quotas/quota-service.js';
import type { BlobStore } from '../stores/blobs/blob-store.js';
import { iso, type Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { ownerGone, processOwner } from '../shared/process-owner.js';
import type { FilesTable } from './files-table.js';

/** Storage quota held by an upload in flight (migration 0005). */
export interface UploadReservationsTable {
  id: string;
  org_id: string;
  key: string;
  bytes: number;
  owner: string;
  created_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    upload_reservations: UploadReservationsTable;
  }
}

/**
 * A reservation older than this is reclaimed even when its holder may still run (another
 * host): no upload takes a day, and the holder's settle then fails instead of counting twice.
 */
export const reservationMaxAgeMs = 24 * 60 * 60 * 1000;

export interface Reservation {
  id: string;
  orgId: string;
  key: string;
}

/**
 * Quota for uploads in flight, made crash-safe: each change to the counter commits together
 * with the row that accounts for it, so a crash at any point leaves either nothing or a row
 * from which `reclaim` gives the quota back and removes the blob.
 */
export class UploadReservations {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly quotas: QuotaService,
    private readonly clock: Clock,
  ) {}

  /** Counts `bytes` against the plan (402 when it does not fit) for a blob to be written at `key`. */
  async reserve(orgId: string, plan: string, key: string, bytes: number): Promise<Reservation> {
    const id = newId.reservation();
    await this.db.transaction().execute(async (trx) => {
      await this.quotas.consume(orgId, plan, 'storage_bytes', bytes, trx);
      await trx
        .insertInto('upload_reservations')
        .values({ id, org_id: orgId, key, bytes, owner: processOwner(), created_at: iso(this.clock.now()) })
        .execute();
    });
    return { id, orgId, key };
  }

  /**
   * Shrinks the reservation to the size actually stored. False when it was reclaimed in the
   * meantime (its holder looked dead or it outlived `reservationMaxAgeMs`): the upload fails.
   */
  async settle(reservation: Reservation, size: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('upload_reservations').select('bytes').where('id', '=', reservation.id).executeTakeFirst();
      if (!row) return false;
      await trx.updateTable('upload_reservations').set({ bytes: size }).where('id', '=', reservation.id).execute();
      await this.quotas.release(reservation.orgId, 'storage_bytes', Number(row.bytes) - size, undefined, trx);
      return true;
    });
  }

  /**
   * The file's record replaces the reservation: its bytes stay counted, now by the file.
   * `within` runs in the same transaction (a keyed request's answer).
   */
  async commit(reservation: Reservation, file: FilesTable, within?: (trx: Kysely<Database>) => Promise<void>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('upload_reservations').where('id', '=', reservation.id).executeTakeFirst();
      if (Number(gone.numDeletedRows) !== 1) return false;
      await trx.insertInto('files').values(file).execute();
      await within?.(trx);
      return true;
    });
  }

  /** Gives the reservation back (a failed upload); a no-op when it was already reclaimed. */
  async release(reservation: Reservation): Promise<void> {
    await this.db.transaction().execute(async (trx) => this.releaseIn(trx, reservation.id));
  }

  /**
   * Reservations whose holder died (same host) or that are older than a day: removes their
   * blob and gives their quota back. Safe from several processes at once: the row's delete
   * decides who releases. Returns how many were reclaimed.
   */
  async reclaim(blobs: BlobStore): Promise<number> {
    const cutoff = iso(this.clock.now() - reservationMaxAgeMs);
    const rows = await this.db.selectFrom('upload_reservations').selectAll().orderBy('created_at').limit(1000).execute();
    let reclaimed = 0;
    for (const row of rows) {
      if (row.created_at >= cutoff && !ownerGone(row.owner)) continue;
      // The row first: whoever deletes it owns the reclaim, and a holder that is still alive
      // can then no longer commit a record pointing at a blob about to go.
      const released = await this.db.transaction().execute(async (trx) => this.releaseIn(trx, row.id));
      if (!released) continue;
      await blobs.delete(row.key);
      reclaimed++;
    }
    return reclaimed;
  }

  private async releaseIn(trx: Kysely<Database>, id: string): Promise<boolean> {
    // The delete decides who releases: of two processes reclaiming at once, one gets the row.
    const row = await trx.deleteFrom('upload_reservations').where('id', '=', id).returning(['org_id', 'bytes']).executeTakeFirst();
    if (!row) return false;
    await this.quotas.release(row.org_id, 'storage_bytes', Number(row.bytes), undefined, trx);
    return true;
  }
}
