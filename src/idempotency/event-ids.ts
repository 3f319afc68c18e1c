import crypto from 'node:crypto';

/**
 * Event ids for the events of a keyed ingest that carry no event_id of their own: UUIDv7 whose
 * time is the key's first use and whose random bits come from the key's nonce and the body's
 * hash, and whose last 32 bits are the event's index in the body. A retry of the same body
 * under the same key (after a crash between the log append and the remembered answer) makes
 * the very same ids, and the event store's event_id de-duplication stores each event once.
 * A different body gets other ids; ids of one request sort in body order.
 */
export function derivedEventIds(nonce: string, bodySha256: string, firstUseMs: number): (index: number) => string {
  const seed = crypto.createHmac('sha256', nonce).update(bodySha256).digest();
  const prefix = Buffer.alloc(12);
  prefix.writeUIntBE(firstUseMs, 0, 6);
  seed.copy(prefix, 6, 0, 6);
  prefix[6] = 0x70 | (prefix[6]! & 0x0f);
  prefix[8] = 0x80 | (prefix[8]! & 0x3f);
  const hex = prefix.toString('hex');
  const head = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 24)}`;
  return (index) => head + (index >>> 0).toString(16).padStart(8, '0');
}
