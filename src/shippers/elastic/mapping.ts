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

const tsKeys = ['@timestamp', 'timestamp', 'time'] as const;
const messageKeys = ['message', 'msg'] as const;

/**
 * One document → an event object for native ingest (docs/shippers.md): `ts` ← `@timestamp`, else
 * `timestamp`, else `time` (pino's); `severity` ← `level`, `log.level` (dotted or nested, ECS),
 * else `severity`, when we know the value; `message` ← `message`, else `msg` (pino's) when a
 * string; the rest → `payload`, as sent. The key a value was taken from leaves the payload.
 */
export function toShippedEvent(index: string, id: string | undefined, document: Record<string, unknown>): ShippedEvent {
  const payload = { ...document };
  let ts: unknown;
  for (const key of tsKeys) {
    if (payload[key] === undefined) continue;
    ts = payload[key];
    delete payload[key];
    break;
  }
  let message: string | undefined;
  for (const key of messageKeys) {
    if (typeof payload[key] !== 'string') continue;
    message = payload[key] as string;
    delete payload[key];
    break;
  }
  let severity = undefined as string | undefined;
  const log = payload.log;
  const nested = typeof log === 'object' && log !== null && !Array.isArray(log) ? (log as Record<string, unknown>) : undefined;
  if (payload.level !== undefined) {
    severity = shipperSeverity(payload.level);
    if (severity) delete payload.level;
  } else if (payload['log.level'] !== undefined) {
    severity = shipperSeverity(payload['log.level']);
    if (severity) delete payload['log.level'];
  } else if (nested?.level !== undefined) {
    severity = shipperSeverity(nested.level);
    if (severity) {
      const { level: _level, ...rest } = nested;
      if (Object.keys(rest).length) payload.log = rest;
      else delete payload.log;
    }
  } else if (payload.severity !== undefined) {
    severity = shipperSeverity(payload.severity);
    if (severity) delete payload.severity;
  }
  return {
    dataset: index,
    fields: { ts, severity, message, payload, ...(id !== undefined ? { event_id: eventIdOf(index, id) } : {}) },
  };
}
