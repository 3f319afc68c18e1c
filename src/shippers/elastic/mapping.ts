import crypto from 'node:crypto';
import { isUuidAnyCase } from '../../shared/ids.js';
import type { ShippedEvent } from '../store-shipped.js';
import { shipperSeverity } from '../severity.js';

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

const nestedLevel = (document: Record<string, unknown>): unknown => {
  const log = document.log;
  return typeof log === 'object' && log !== null && !Array.isArray(log) ? (log as Record<string, unknown>).level : undefined;
};

/**
 * One document → an event object for native ingest (docs/shippers.md): `ts` ← `@timestamp`, else
 * `timestamp`, else `time` (pino's); `severity` ← `level`, `log.level` (dotted or nested, ECS),
 * else `severity`, when we know the value; `message` ← `message`, else `msg` (pino's) when a
 * string; the rest → `payload`, as sent. The key a value was taken from leaves the payload.
 * One pass that copies, never `delete` (which leaves V8 objects slow to serialise).
 */
export function toShippedEvent(index: string, id: string | undefined, document: Record<string, unknown>, bytes: number): ShippedEvent {
  const tsKey = document['@timestamp'] !== undefined ? '@timestamp' : document.timestamp !== undefined ? 'timestamp' : document.time !== undefined ? 'time' : '';
  const messageKey = typeof document.message === 'string' ? 'message' : typeof document.msg === 'string' ? 'msg' : '';
  let levelKey = '';
  let severity: string | undefined;
  if (document.level !== undefined) {
    severity = shipperSeverity(document.level);
    levelKey = 'level';
  } else if (document['log.level'] !== undefined) {
    severity = shipperSeverity(document['log.level']);
    levelKey = 'log.level';
  } else if (nestedLevel(document) !== undefined) {
    severity = shipperSeverity(nestedLevel(document));
    levelKey = 'log';
  } else if (document.severity !== undefined) {
    severity = shipperSeverity(document.severity);
    levelKey = 'severity';
  }
  // A level we do not know stays in the payload.
  if (severity === undefined) levelKey = '';
  const payload: Record<string, unknown> = {};
  for (const key in document) {
    if (key === tsKey || key === messageKey) continue;
    if (key === levelKey) {
      if (key !== 'log') continue;
      // ECS's nested log.level: the rest of `log` (logger, origin…) stays.
      const rest: Record<string, unknown> = {};
      let kept = false;
      for (const k in document.log as Record<string, unknown>) {
        if (k === 'level') continue;
        rest[k] = (document.log as Record<string, unknown>)[k];
        kept = true;
      }
      if (kept) payload.log = rest;
      continue;
    }
    payload[key] = document[key];
  }
  const fields: Record<string, unknown> = { ts: tsKey ? document[tsKey] : undefined, severity, message: messageKey ? document[messageKey] : undefined, payload };
  if (id !== undefined) fields.event_id = eventIdOf(index, id);
  return { dataset: index, fields, bytes };
}
