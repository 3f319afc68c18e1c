import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import { iso, type Clock } from '../shared/clock.js';
import { ownerGone, processOwner } from '../shared/process-owner.js';
import { seal, unseal } from './sealed-answer.js';
import type { IdempotencyKeysTable } from './idempotency-table.js';
import './idempotency-table.js';

/** DECISIONS.md §16: a key is remembered for 24 hours from its first use. */
export const keepMs = 24 * 60 * 60 * 1000;
/** A claim whose holder stopped renewing it for this long may be taken over by any process. */
export const leaseMs = 30_000;

/**
 * One token's key: the only way into the store, so no statement can reach another token's
 * keys. `sealKey` comes from the caller's token (sealed-answer.ts).
 */
export interface KeyScope {
  readonly tokenId: string;
  readonly key: string;
  readonly sealKey: Buffer;
}

/** The request body as received: its SHA-256 (hex) and length. */
export interface BodyDigest {
  sha256: string;
  bytes: number;
}

/** What a replay sends again: the first answer's status, type and bytes. */
export interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** This process holds the key: it runs the request, then records the answer or releases the key. */
export interface Claim {
  readonly scope: KeyScope;
  /** The fence: every write of the holder checks the row still carries it. */
  readonly id: string;
  readonly nonce: string;
  /** The key's first use (epoch ms). */
  readonly firstUseMs: number;
}

/** Someone used the key before: answered (`done`) or still running. */
export interface KnownRequest {
  state: 'running' | 'done';
  endpoint: string;
  body: BodyDigest | undefined;
  firstUse: string;
  /** Present when done. */
  answer?: Answer;
}

export type ClaimResult = { claimed: Claim; known?: undefined } | { known: KnownRequest; claimed?: undefined };

const newToken = () => crypto.randomBytes(16).toString('hex');

type Row = IdempotencyKeysTable;

/**
 * The remembered requests, over the metadata database. Races between processes are settled by
 * the database: the first use inserts the row (`on conflict do nothing`), and every later change
 * is a compare-and-set on the row's claim id and state, so of two processes only one wins.
 */
export class IdempotencyStore {
  private readonly owner = processOwner();
  /**
   * Per start: tells this store's rows from those of an earlier process with the same pid. One
   * store per server (the idempotency capability opens it; the plugin and the purge share it),
   * so a running claim of this process is never mistaken for an abandoned one.
   */
  private readonly instance = crypto.randomBytes(8).toString('hex');
  /** Claims this store holds now (by claim id). */
  private readonly claims = new Set<string>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  private where(scope: KeyScope) {
    return { token_id: scope.tokenId, idem_key: scope.key };
  }

  /**
   * Claims the key for a request to `endpoint`, or tells who used it before. A key whose 24 hours
   * are over is claimed afresh; a key whose last request failed (5xx), or whose holder is gone
   * (a process of this host that no longer runs, or a lease nobody renewed), is taken over, with
   * its nonce and first use kept.
   */
  async claim(scope: KeyScope, request: { endpoint: string; body: BodyDigest | undefined }): Promise<ClaimResult> {
    for (let attempt = 0; ; attempt++) {
      const now = this.clock.now();
      const fresh = this.freshRow(scope, request, now);
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values(fresh)
        .onConflict((oc) => oc.columns(['token_id', 'idem_key']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows) === 1) return { claimed: this.held(scope, fresh) };
      const row = await this.db.selectFrom('idempotency_keys').selectAll().where('token_id', '=', scope.tokenId).where('idem_key', '=', scope.key).executeTakeFirst();
      // Each round trip below is a compare-and-set another process may win; a handful of
      // rounds settles any race (each loss means someone else made progress).
      if (attempt === 5) throw new Error('idempotency key: could not settle a claim race');
      if (!row) continue;
      if (row.expires_at <= iso(now)) {
        if (await this.replace(row, fresh)) return { claimed: this.held(scope, fresh) };
        continue;
      }
      if (row.state === 'done') return { known: this.known(scope, row) };
      if (row.state === 'running' && !this.abandoned(row, now)) return { known: this.known(scope, row) };
      // A different body may not take over a claim that may have had its effect already.
      if (row.state === 'running' && (row.endpoint !== request.endpoint || (row.request_sha256 !== null && request.body && row.request_sha256 !== request.body.sha256))) {
        return { known: this.known(scope, row) };
      }
      const takeover = { ...fresh, nonce: row.nonce, created_at: row.created_at, expires_at: row.expires_at };
      if (await this.replace(row, takeover)) return { claimed: this.held(scope, takeover) };
    }
  }

  private freshRow(scope: KeyScope, request: { endpoint: string; body: BodyDigest | undefined }, now: number): Row {
    return {
      token_id: scope.tokenId,
      idem_key: scope.key,
      endpoint: request.endpoint,
      request_sha256: request.body?.sha256 ?? null,
      request_bytes: request.body?.bytes ?? null,
      state: 'running',
      claim_id: newToken(),
      owner: this.owner,
      owner_instance: this.instance,
      lease_until: iso(now + leaseMs),
      nonce: newToken(),
      status: null,
      content_type: null,
      answer: null,
      created_at: iso(now),
      expires_at: iso(now + keepMs),
    };
  }

  /** Compare-and-set: replaces the row only if it is still the version read. */
  private async replace(seen: Row, next: Row): Promise<boolean> {
    const result = await this.db
      .updateTable('idempotency_keys')
      .set(next)
      .where('token_id', '=', seen.token_id)
      .where('idem_key', '=', seen.idem_key)
      .where('claim_id', '=', seen.claim_id)
      .where('state', '=', seen.state)
      .where('lease_until', '=', seen.lease_until)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private held(scope: KeyScope, row: Row): Claim {
    this.claims.add(row.claim_id);
    return { scope, id: row.claim_id, nonce: row.nonce, firstUseMs: Date.parse(row.created_at) };
  }

  /**
   * Whether a running row's holder is gone: its lease ran out; or it is this process's but no
   * longer held (its release failed); or it names this host and pid from an earlier start (a
   * container restarted with the same pid), or a pid of this host that no longer runs.
   */
  private abandoned(row: Row, now: number): boolean {
    if (row.lease_until <= iso(now)) return true;
    if (row.owner_instance === this.instance) return !this.claims.has(row.claim_id);
    if (row.owner === this.owner) return true;
    return ownerGone(row.owner);
  }

  private known(scope: KeyScope, row: Row): KnownRequest {
    const body = row.request_sha256 === null ? undefined : { sha256: row.request_sha256, bytes: Number(row.request_bytes) };
    const known: KnownRequest = { state: row.state === 'done' ? 'done' : 'running', endpoint: row.endpoint, body, firstUse: row.created_at };
    if (row.state === 'done') {
      known.answer = { status: Number(row.status), contentType: row.content_type ?? 'application/json; charset=utf-8', body: unseal(scope.sealKey, sealContext(row), row.answer ?? '') };
    }
    return known;
  }

  /**
   * Records the answer, if the claim is still this one's. Given `db`, a transaction, it commits
   * with the request's effect. False when the claim was taken over meanwhile.
   */
  async complete(claim: Claim, answer: Answer, body: BodyDigest, db: Kysely<Database> = this.db): Promise<boolean> {
    const result = await db
      .updateTable('idempotency_keys')
      .set({
        state: 'done',
        status: answer.status,
        content_type: answer.contentType,
        answer: seal(claim.scope.sealKey, sealContext({ token_id: claim.scope.tokenId, idem_key: claim.scope.key }), answer.body),
        request_sha256: body.sha256,
        request_bytes: body.bytes,
      })
      .where('token_id', '=', claim.scope.tokenId)
      .where('idem_key', '=', claim.scope.key)
      .where('claim_id', '=', claim.id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Frees the key (the request failed with 5xx, or could not be remembered). The nonce stays. */
  async release(claim: Claim): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'failed' })
      .where('token_id', '=', claim.scope.tokenId)
      .where('idem_key', '=', claim.scope.key)
      .where('claim_id', '=', claim.id)
      .where('state', '=', 'running')
      .execute();
  }

  /** Extends the lease while the request runs; false once the claim is no longer this one's. */
  async renew(claim: Claim): Promise<boolean> {
    const result = await this.db
      .updateTable('idempotency_keys')
      .set({ lease_until: iso(this.clock.now() + leaseMs) })
      .where('token_id', '=', claim.scope.tokenId)
      .where('idem_key', '=', claim.scope.key)
      .where('claim_id', '=', claim.id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The claim is settled (or abandoned): this process no longer holds it. */
  forget(claim: Claim): void {
    this.claims.delete(claim.id);
  }

  /** Deletes rows past their 24 hours (the purge job; several processes may run it at once). */
  async purge(): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', iso(this.clock.now())).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

const sealContext = (row: Pick<Row, 'token_id' | 'idem_key'>) => `${row.token_id}\0${row.idem_key}`;
