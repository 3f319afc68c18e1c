import type { Kysely } from 'kysely';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Database } from '../stores/metadata/schema.js';
import { AppError, badRequest } from '../errors/app-error.js';
import type { NewEvent } from '../engine/event-store.js';
import type { BodyDigest, Claim, IdempotencyStore } from './idempotency-store.js';
import { leaseMs } from './idempotency-store.js';
import type { RawBodyObserver } from './body-digest.js';
import { derivedEventIds } from './event-ids.js';

/**
 * Records the answer inside the transaction that commits the request's effect, so the two
 * commit together or not at all. Services call it with their transaction and the answer's
 * body; it fails (and so rolls the effect back) when a retry took the key over meanwhile.
 */
export type RecordAnswer<Body> = (db: Kysely<Database>, body: Body) => Promise<void>;

/** A claim is renewed for at most this long: a handler hung for an hour lets its key go. */
const maxHoldMs = 60 * 60 * 1000;
const json = 'application/json; charset=utf-8';

/**
 * A request with an Idempotency-Key that this process claimed: it runs, and its answer is
 * recorded (2xx, 4xx) or the key released (5xx) when it is sent.
 */
export class KeyedRequest {
  private recordedStatus: number | undefined;
  private finished = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly started = Date.now();

  constructor(
    private readonly store: IdempotencyStore,
    readonly claim: Claim,
    /** Known at the claim (a body Fastify read), or observed while the handler streams it. */
    private readonly body: BodyDigest | RawBodyObserver,
    private readonly reply: FastifyReply,
    private readonly log: FastifyBaseLogger,
  ) {
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.started > maxHoldMs) return clearInterval(this.heartbeat);
      this.store.renew(claim).then(
        (held) => held || clearInterval(this.heartbeat),
        (error: unknown) => this.log.warn({ err: error }, 'idempotency: could not renew the lease of a running request'),
      );
    }, leaseMs / 3);
    this.heartbeat.unref();
  }

  private whole(options?: { onlyIfArrived: boolean }): Promise<BodyDigest> {
    return 'sha256' in this.body ? Promise.resolve(this.body) : this.body.whole(options);
  }

  /**
   * The hook a route hands its service, to record `status` and the body it is about to send in
   * the transaction of the effect. A streamed body is first read to its end (its digest is
   * part of the record).
   */
  async answerIn<Body>(status: number): Promise<RecordAnswer<Body>> {
    const body = await this.whole().catch((error: Error) => {
      throw Object.assign(badRequest(`${error.message}; send the whole body`), { cause: error });
    });
    const serialize = this.reply.getSerializationFunction(String(status)) ?? this.reply.getSerializationFunction(`${String(status)[0]}xx`) ?? JSON.stringify;
    return async (db, value) => {
      const bytes = Buffer.from(serialize(value as { [key: string]: unknown }), 'utf8');
      if (!(await this.store.complete(this.claim, { status, contentType: json, body: bytes }, body, db))) throw takenOver();
      this.recordedStatus = status;
    };
  }

  /**
   * Event ids for the events without a client event_id, the same for every run of this body
   * under this key (event-ids.ts): after a crash between the log append and the recorded
   * answer, the retry's events are recognised as stored and kept once. Only for bodies Fastify
   * read (the digest is known before the handler runs).
   */
  deriveEventIds(events: NewEvent[]): void {
    if (!('sha256' in this.body)) throw new Error('derived event ids need the body digest before the handler (idempotency: "body")');
    const idOf = derivedEventIds(this.claim.nonce, this.body.sha256, this.claim.firstUseMs);
    events.forEach((event, index) => {
      if (event.clientEventId) return;
      event.eventId = idOf(index);
      event.clientEventId = true;
    });
  }

  /**
   * The answer is being sent: 5xx frees the key; 2xx and 4xx are recorded, unless the effect's
   * transaction recorded it already, or the body did not fully arrive (a refusal sent before
   * the end of an upload: its body cannot be compared with a retry's, so the key is freed).
   * Never throws: the answer goes out whatever happens here.
   */
  async finish(status: number, contentType: string, payload: unknown): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    clearInterval(this.heartbeat);
    try {
      if (status >= 500) return await this.store.release(this.claim);
      if (this.recordedStatus === status) return;
      // A string (JSON) or bytes (protobuf); a streamed answer is not remembered.
      const bytes = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.isBuffer(payload) ? payload : undefined;
      const body = await this.whole({ onlyIfArrived: true }).catch(() => undefined);
      if (bytes === undefined || body === undefined) return await this.store.release(this.claim);
      await this.store.complete(this.claim, { status, contentType, body: bytes }, body);
    } catch (error) {
      // Left running: this process no longer holds it (forget, below), so its next retry here
      // takes it over at once, and other processes once the lease runs out.
      this.log.warn({ err: error }, 'idempotency: could not record the answer of a keyed request');
    } finally {
      this.store.forget(this.claim);
    }
  }
}

/** The key was taken over by a retry while this request ran (its lease ran out): its effect is undone. */
const takenOver = () =>
  new AppError('conflict', 'a retry with the same Idempotency-Key took this request over while it ran; retry to get its answer', {}, { 'Retry-After': '1' });
