import crypto from 'node:crypto';
import { isUuidAnyCase } from '../../shared/ids.js';
import { shippedEvent, type ShippedEvent } from '../store-shipped.js';
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
  const ts = tsKey ? document[tsKey] : undefined;
  const message = messageKey ? document[messageKey] : undefined;
  // The document becomes the payload: the keys taken leave it as undefined, which JSON leaves
  // out (`delete` would make it a dictionary, slow to serialise; a copy costs a second object).
  const payload = document;
  if (tsKey) payload[tsKey] = undefined;
  if (messageKey) payload[messageKey] = undefined;
  if (levelKey === 'log') {
    // ECS's nested log.level: the rest of `log` (logger, origin…) stays.
    const { level: _level, ...rest } = document.log as Record<string, unknown>;
    payload.log = Object.keys(rest).length ? rest : undefined;
  } else if (levelKey) payload[levelKey] = undefined;
  return shippedEvent(index, ts, severity, message as string | undefined, payload, id === undefined ? undefined : eventIdOf(index, id), bytes, undefined);
}
