import { tenantKey, type Tenant } from '../../tenancy/tenant.js';
import type { StoredEvent } from '../../shared/event-record.js';
import { recordEvents } from '../tail-record.js';

interface RecentRecord {
  key: string;
  firstSeq: number;
  count: number;
  /** The log record's body (event-batch.ts): off the V8 heap, decoded only when tail reads it. */
  body: Buffer;
}

/** What a dropped slot holds until the array is compacted. */
const released: RecentRecord = { key: '', firstSeq: 0, count: 0, body: Buffer.alloc(0) };

/**
 * The newest durable events, kept in memory as the write-ahead log acknowledged them: live
 * tail reads them here, so a tail's latency never waits for the loader. Holds at most
 * `capacity` events (oldest dropped first); every event with seq >= `floor` is here. Records
 * are kept as their encoded bodies: holding the parsed events instead kept every event alive
 * past the young generation, and the old generation's churn raised peak RSS by ~100 MB.
 */
export class RecentEvents {
  private readonly records: RecentRecord[] = [];
  private head = 0;
  private size = 0;
  private floor: number;

  constructor(
    private readonly capacity: number,
    /** Seq of the first event the process will append. */
    firstSeq: number,
  ) {
    this.floor = firstSeq;
  }

  /** Called in seq order, right after the record is durable. */
  add(tenant: Tenant, firstSeq: number, count: number, body: Buffer): void {
    this.records.push({ key: tenantKey(tenant), firstSeq, count, body });
    this.size += count;
    while (this.size > this.capacity && this.head < this.records.length - 1) {
      const dropped = this.records[this.head]!;
      // Released at once: a dropped record may hold a whole request's events.
      this.records[this.head++] = released;
      this.size -= dropped.count;
      this.floor = dropped.firstSeq + dropped.count;
    }
    if (this.head > 64 && this.head * 2 > this.records.length) {
      this.records.splice(0, this.head);
      this.head = 0;
    }
  }

  /**
   * The tenant's events with seq > afterSeq, oldest first, at most `limit`; undefined when
   * some of them are no longer held (the caller reads the engine instead). `dataset` holds
   * the dataset id.
   */
  after(tenant: Tenant, afterSeq: number, limit: number): StoredEvent[] | undefined {
    if (afterSeq + 1 < this.floor) return undefined;
    const key = tenantKey(tenant);
    const out: StoredEvent[] = [];
    // Records are in seq order: skip those that end at or before afterSeq.
    let lo = this.head;
    let hi = this.records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const r = this.records[mid]!;
      if (r.firstSeq + r.count - 1 <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.records.length && out.length < limit; i++) {
      const r = this.records[i]!;
      if (r.key !== key) continue;
      recordEvents(r.body, r.firstSeq, undefined, afterSeq, limit, out);
    }
    return out;
  }
}
