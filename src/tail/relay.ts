import crypto from 'node:crypto';
import { maxWakeBodyBytes, type Bus, type BusMessages, type WakeRecord } from '../cluster/bus.js';
import type { EventsRuntime } from '../events/runtime.js';
import { lastSeqOf, type TailRecord } from '../engine/tail-record.js';
import { tenantKey, tenantOnly, type Tenant } from '../tenancy/tenant.js';
import type { TailHub } from './hub.js';

/** How often a process with sessions of a tenant says so on the bus. */
export const interestEveryMs = 5_000;
/** How long the others send that tenant's events along after hearing it (a few missed messages). */
export const interestTtlMs = 3 * interestEveryMs;
/** Tenants whose interest a process remembers; past it newcomers go unheard until entries expire (their records then travel without events: a read). */
const maxInterests = 100_000;

export interface TailRelayOptions {
  bus: Bus;
  hub: TailHub;
  events: Pick<EventsRuntime, 'store' | 'onAppended'>;
  /** The installation's key (OPS_SECRET_KEY): records from elsewhere are taken only with its MAC. */
  secret: Buffer;
  log: (message: string, error?: unknown) => void;
  now?: () => number;
}

/**
 * What live tail sends and takes on the bus (docs/events-engine.md, "Live tail on ClickHouse").
 *
 * On the embedded engine (and through an events node) each durable append is a bare `tail.wake`:
 * a feed reads the store, which answers from the recent events in memory.
 *
 * On ClickHouse a read per wake-up would be a ClickHouse statement per ingest and host, each
 * scanning the tenant's rows; instead the store tells of each record of this process's log
 * (LoggedEventStore.onTailRecord):
 * - **when durable**, to this process's feeds, with its events, as the embedded engine's tail
 *   takes them from memory at that moment (a read of the store waits for this process's loader
 *   to pass what it made durable, so it holds them too);
 * - **once loaded**, which is when its appends are answered, on the bus as `tail.wake` with the
 *   record: its events only when another process has said (`tail.interest`, every
 *   `interestEveryMs` while it has sessions of the tenant) that it wants them and the body is at
 *   most `maxWakeBodyBytes`, else the record's place alone, and the receiving feed reads
 *   ClickHouse, which holds the record by then.
 * A feed hands on a record's events without reading only when the record follows its cursor
 * (hub.ts); anything lost on the bus shows as a gap in the chain, or is found by the poll. A
 * session resumed on another host may name a seq that host does not see in ClickHouse yet: the
 * resume keeps it (tail-position.ts clampTo), and that log's next events follow.
 *
 * A record's events are taken from the bus only with a valid MAC under the installation's key:
 * whoever can publish on the NATS subjects without it can wake a feed, not feed it events.
 */
export class TailRelay {
  /** This process on the bus: its own `tail.interest` comes back to it (publish delivers locally). */
  private readonly id = crypto.randomBytes(8).toString('hex');
  private readonly key: Buffer;
  /** This process's log, whose records its feeds had when they were durable. */
  private ownLog: string | undefined;
  /** Tenant key → until when another process wants its records' events. */
  private readonly interest = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private warnedMac = false;
  private readonly now: () => number;

  constructor(private readonly options: TailRelayOptions) {
    this.key = relayKey(options.secret);
    this.now = options.now ?? Date.now;
  }

  /** Subscribes to the store's records (or append wake-ups) and to the bus. */
  start(): void {
    const { bus, hub, events } = this.options;
    const records = events.store.onTailRecord?.((record, loaded) => (loaded ? this.share(record) : this.durable(record))) ?? false;
    if (!records) events.onAppended((tenant, lastSeq) => bus.publish('tail.wake', { tenant: tenantOnly(tenant), lastSeq }));
    bus.subscribe('tail.wake', (message) => this.receive(message));
    bus.subscribe('tail.interest', ({ tenant, from }) => {
      if (from !== this.id) this.interested(tenant);
    });
    this.timer = setInterval(() => {
      for (const tenant of hub.tenants()) this.announce(tenant);
    }, interestEveryMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** This process has sessions of the tenant: the others send its records' events along. */
  announce(tenant: Tenant): void {
    this.options.bus.publish('tail.interest', { tenant: tenantOnly(tenant), from: this.id });
  }

  /** A record of this process's log is durable: to this process's feeds. */
  private durable(record: TailRecord): void {
    this.ownLog = record.log;
    this.options.hub.offer(record);
  }

  /** A record of this process's log is in ClickHouse: to the other processes. */
  private share(record: TailRecord): void {
    const { tenant, body } = record;
    const wake: WakeRecord = { log: record.log, firstSeq: record.firstSeq, count: record.count, prev: record.prev };
    if (body && body.length <= maxWakeBodyBytes && this.wantedElsewhere(tenant)) {
      wake.body = body;
      wake.mac = this.mac(tenant, wake, body);
    }
    this.options.bus.publish('tail.wake', { tenant: tenantOnly(tenant), lastSeq: lastSeqOf(record), record: wake });
  }

  private receive({ tenant, lastSeq, record }: BusMessages['tail.wake']): void {
    const { hub } = this.options;
    if (!record) return hub.wake(tenant, lastSeq);
    // This process's own (publish delivers here too), handed to its feeds when durable.
    if (record.log === this.ownLog || !hub.has(tenant)) return;
    const taken: TailRecord = { tenant, log: record.log, firstSeq: record.firstSeq, count: record.count, prev: record.prev };
    if (record.body && this.authentic(tenant, record, record.body)) taken.body = record.body;
    hub.offer(taken);
  }

  private authentic(tenant: Tenant, record: WakeRecord, body: Buffer): boolean {
    const expected = Buffer.from(this.mac(tenant, record, body));
    const given = Buffer.from(record.mac ?? '');
    if (given.length === expected.length && crypto.timingSafeEqual(given, expected)) return true;
    if (!this.warnedMac) {
      this.warnedMac = true;
      this.options.log('a live tail record on the bus has no valid MAC (another installation on this NATS account, or a different OPS_SECRET_KEY); its events are read from the store instead');
    }
    return false;
  }

  private mac(tenant: Tenant, record: WakeRecord, body: Buffer): string {
    return recordMac(this.key, tenant, record, body);
  }

  private interested(tenant: Tenant): void {
    const now = this.now();
    const key = tenantKey(tenant);
    if (this.interest.size >= maxInterests && !this.interest.has(key)) {
      for (const [key, until] of this.interest) if (until <= now) this.interest.delete(key);
      if (this.interest.size >= maxInterests) return;
    }
    this.interest.set(key, now + interestTtlMs);
  }

  private wantedElsewhere(tenant: Tenant): boolean {
    const until = this.interest.get(tenantKey(tenant));
    return until !== undefined && until > this.now();
  }
}

/** The key records are signed with, derived from the installation's (never the key itself on the wire). */
export const relayKey = (secret: Buffer): Buffer => crypto.createHmac('sha256', secret).update('opsplatform tail records v1').digest();

/** A record's MAC: its tenant, place in its log, chain and body. */
export function recordMac(key: Buffer, tenant: Tenant, record: Pick<WakeRecord, 'log' | 'firstSeq' | 'count' | 'prev'>, body: Buffer): string {
  return crypto
    .createHmac('sha256', key)
    .update(`${tenantKey(tenant)}\n${record.log}\n${record.firstSeq}\n${record.count}\n${record.prev}\n`)
    .update(body)
    .digest('base64url');
}
