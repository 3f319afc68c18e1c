import { tenantKey, type Tenant } from '../../tenancy/tenant.js';
import type { StoredEvent } from './event-record.js';
import type { NewEvent } from './event-store.js';

interface RecentRecord {
  key: string;
  firstSeq: number;
  ingestedAt: number;
  events: readonly NewEvent[];
}

/** What a dropped slot holds until the array is compacted. */
const released: RecentRecord = { key: '', firstSeq: 0, ingestedAt: 0, events: [] };

/**
 * The newest durable events, kept in memory as the write-ahead log acknowledged them: live
 * tail reads them here, so a tail's latency never waits for the loader. Holds at most
 * `capacity` events (oldest dropped first); every event with seq >= `floor` is here.
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
  add(tenant: Tenant, firstSeq: number, ingestedAt: number, events: readonly NewEvent[]): void {
    this.records.push({ key: tenantKey(tenant), firstSeq, ingestedAt, events });
    this.size += events.length;
    while (this.size > this.capacity && this.head < this.records.length - 1) {
      const dropped = this.records[this.head]!;
      // Released at once: a dropped record may hold a whole request's events.
      this.records[this.head++] = released;
      this.size -= dropped.events.length;
      this.floor = dropped.firstSeq + dropped.events.length;
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
      if (r.firstSeq + r.events.length - 1 <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.records.length && out.length < limit; i++) {
      const r = this.records[i]!;
      if (r.key !== key) continue;
      for (let k = Math.max(0, afterSeq + 1 - r.firstSeq); k < r.events.length && out.length < limit; k++) {
        const e = r.events[k]!;
        out.push({
          seq: r.firstSeq + k,
          event_id: e.eventId,
          ts: e.ts,
          ingested_at: r.ingestedAt,
          dataset: e.datasetId,
          severity: e.severity,
          event: e.event,
          actor: e.actor,
          source: e.source,
          message: e.message,
          payloadJson: e.payload,
          bytes_raw: e.bytesRaw,
        });
      }
    }
    return out;
  }
}
