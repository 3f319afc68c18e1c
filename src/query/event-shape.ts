/**
 * The API shape of an event (SPEC.md §2.4), shared by POST /query and live tail.
 *
 *   apiEventJson(stored, tenant)                            // POST /query: with org_id, project_id
 *   apiEventJson(stored, tenant, { includeTenant: false })  // live tail: without them
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

const dayMs = 86_400_000;
/** 10000-01-01T00:00:00Z: past it toISOString writes a six-digit year. */
const maxFourDigitYearMs = 253_402_300_800_000;
let cachedDay = Number.NaN;
let cachedDayPrefix = '';
const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * `new Date(ms).toISOString()`, without a Date per call: the day's `YYYY-MM-DDT` is kept (a page's
 * events are mostly of one day) and the time of day written from integers. A page writes 200 of
 * these; toISOString was ~12% of a cached page's CPU (docs/benchmarks.md, "The cost of a
 * request"). Anything unusual (before 1970, past 9999, a fraction of a millisecond) takes
 * toISOString itself; event-shape.test.ts holds the two equal.
 */
export function iso(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= maxFourDigitYearMs) return new Date(ms).toISOString();
  let rest = ms % dayMs;
  const day = ms - rest;
  if (day !== cachedDay) {
    cachedDayPrefix = new Date(day).toISOString().slice(0, 11);
    cachedDay = day;
  }
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${cachedDayPrefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}
const text = JSON.stringify;

/**
 * The JSON text of the API Event (SPEC.md §2.4) of a stored event, written by hand: a page of
 * 100 events took ~1 ms through parse → object → fast-json-stringify (the payload is a
 * free-form record, the slowest kind of value for a schema serializer) and ~0.2 ms this way,
 * with the stored payload text embedded as it is. Key order and omissions follow
 * ApiEventSchema; event-shape.test.ts checks the text against the schema and against
 * JSON.stringify of the same object for random events.
 */
export function apiEventJson(e: StoredEvent, tenant: Tenant, options?: { includeTenant?: boolean }): string {
  let out = `{"event_id":${text(e.event_id)},"ts":"${iso(e.ts)}","ingested_at":"${iso(e.ingested_at)}"`;
  if (options?.includeTenant ?? true) out += `,"org_id":${text(tenant.orgId)},"project_id":${text(tenant.projectId)}`;
  out += `,"dataset":${text(e.dataset)},"severity":"${severities[e.severity] ?? 'info'}","event":${text(e.event)}`;
  if (e.actor !== null && e.actor !== undefined) out += `,"actor":${text(e.actor)}`;
  if (e.source !== null && e.source !== undefined) out += `,"source":${text(e.source)}`;
  return `${out},"message":${text(e.message)},"payload":${e.payloadJson},"bytes_raw":${text(e.bytes_raw)}}`;
}
