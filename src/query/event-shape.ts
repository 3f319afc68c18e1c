/**
 * The API shape of an event (SPEC.md §2.4), shared by POST /query and live tail.
 *
 *   toApiEvent(stored, tenant)                            // POST /query: with org_id, project_id
 *   toApiEvent(stored, tenant, { includeTenant: false })  // live tail: without them
 *
 * Times are ISO 8601 with milliseconds, severity is its name, dataset its name (the store
 * resolved it), and `actor` / `source` are left out when the event has none.
 */
import { Type, type Static } from '@sinclair/typebox';
import { severities, type Severity, type StoredEvent } from '../stores/events/event-record.js';
import type { Tenant } from '../tenancy/tenant.js';

/** TypeBox schema of the API event (org_id / project_id optional: live tail omits them). */
export const ApiEventSchema = Type.Object(
  {
    event_id: Type.String({ format: 'uuid' }),
    ts: Type.String({ format: 'date-time', description: 'event time, ISO 8601 with milliseconds' }),
    ingested_at: Type.String({ format: 'date-time' }),
    org_id: Type.Optional(Type.String({ description: 'omitted in live-tail events' })),
    project_id: Type.Optional(Type.String({ description: 'omitted in live-tail events' })),
    dataset: Type.String({ description: 'dataset name' }),
    severity: Type.Unsafe<Severity>({ type: 'string', enum: [...severities], description: 'ordinal: debug < info < warn < error < fatal' }),
    event: Type.String({ description: 'event name' }),
    actor: Type.Optional(Type.String()),
    source: Type.Optional(Type.String()),
    message: Type.String(),
    payload: Type.Record(Type.String(), Type.Unknown(), { description: 'free-form key/value data' }),
    bytes_raw: Type.Number(),
  },
  { additionalProperties: false },
);
export type ApiEvent = Static<typeof ApiEventSchema>;

const iso = (ms: number): string => new Date(ms).toISOString();

/** Turns a stored event into the API Event (SPEC.md §2.4). */
export function toApiEvent(
  e: StoredEvent,
  tenant: Tenant,
  options?: { includeTenant?: boolean },
): Record<string, unknown> {
  const out: Record<string, unknown> = { event_id: e.event_id, ts: iso(e.ts), ingested_at: iso(e.ingested_at) };
  if (options?.includeTenant ?? true) {
    out.org_id = tenant.orgId;
    out.project_id = tenant.projectId;
  }
  out.dataset = e.dataset;
  out.severity = severities[e.severity] ?? 'info';
  out.event = e.event;
  if (e.actor !== null && e.actor !== undefined) out.actor = e.actor;
  if (e.source !== null && e.source !== undefined) out.source = e.source;
  out.message = e.message;
  out.payload = e.payload;
  out.bytes_raw = e.bytes_raw;
  return out;
}
