import type { Tenant } from '../tenancy/tenant.js';
import type { StoredEvent } from '../shared/event-record.js';
import { BatchReader } from './wal/event-batch.js';

/**
 * One write-ahead log record as live tail passes it around on ClickHouse (src/tail/relay.ts):
 * the events `firstSeq` … `firstSeq + count - 1` of log `log`, all of one tenant.
 *
 * `prev` chains one tenant's records of one log: the tenant has no event in the log after
 * `prev` and before `firstSeq`. So a reader whose position (tail-position.ts) has looked at the
 * log up to `prev` or further misses nothing by taking this record next, and one that has not
 * knows that some record between did not reach it (lost on the bus, or sent before it listened)
 * and reads the store instead. `prev` may be higher than the tenant's true previous event (the
 * log's position when the chain was last started over, LoggedEventStore's `tailFloor`): that
 * only costs such a reader one read.
 */
export interface TailRecord {
  tenant: Tenant;
  log: string;
  firstSeq: number;
  count: number;
  prev: number;
  /** The record's body (event-batch.ts); absent when it was not sent along (too big, or no other process asked): read the store. */
  body?: Buffer;
}

export const lastSeqOf = (record: Pick<TailRecord, 'firstSeq' | 'count'>): number => record.firstSeq + record.count - 1;

/**
 * The events of a record body, oldest first, numbered from `firstSeq`; `dataset` holds the
 * dataset *id*. `log` undefined: the single log (the embedded engine's events carry none).
 * Only those with seq > `afterSeq`, at most `limit`.
 */
export function recordEvents(body: Buffer, firstSeq: number, log: string | undefined, afterSeq = -1, limit = Infinity, out: StoredEvent[] = []): StoredEvent[] {
  const reader = new BatchReader(body);
  for (let k = 0; k < reader.count && out.length < limit && reader.next(); k++) {
    const seq = firstSeq + k;
    if (seq <= afterSeq) continue;
    const { payload, ...texts } = reader.texts();
    out.push({
      seq,
      ...(log !== undefined ? { log } : {}),
      event_id: reader.eventId,
      ts: reader.ts,
      ingested_at: reader.ingestedAt,
      dataset: reader.datasetId,
      severity: reader.severity,
      ...texts,
      payloadJson: payload,
      bytes_raw: reader.bytesRaw,
    });
  }
  return out;
}
