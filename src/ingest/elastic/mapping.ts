import crypto from 'node:crypto';
import { isUuidAnyCase } from '../../shared/ids.js';
import { ingestItem, type IngestItem } from '../core/insert.js';

/**
 * `_id` → the event's client event_id, so a retried bulk is stored once (native ingest's
 * de-duplication, per tenant): a UUID is used as it is; any other id becomes a name-based UUID
 * (version 8, from SHA-256 of the index and the id), so the same `_id` in the same index is the
 * same event, and in another index another one, as in Elasticsearch.
 */
export function eventIdOf(index: string, id: string): string {
  if (isUuidAnyCase(id)) return id.toLowerCase();
  const hash = crypto.createHash('sha256').update(index).update('\0').update(id).digest();
  hash[6] = 0x80 | (hash[6]! & 0x0f);
  hash[8] = 0x80 | (hash[8]! & 0x3f);
  const hex = hash.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * One document → an item for native ingest's mapping (docs/shippers.md): the document is mapped
 * as native ingest maps an NDJSON line (normaliseMapped: `@timestamp`, `log.level`, `msg`… are
 * among its aliases), with `_id` as its client event id where it has no `event_id`.
 */
export function toShippedEvent(index: string, id: string | undefined, document: Record<string, unknown>, bytes: number): IngestItem {
  return ingestItem(index, document, undefined, undefined, undefined, id === undefined ? undefined : eventIdOf(index, id), undefined, bytes, undefined);
}
