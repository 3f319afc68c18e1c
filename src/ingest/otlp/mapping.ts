import type { Json } from './any-value.js';
import type { DecodedRecord, DecodedResource, DecodedScope } from './decode.js';

/**
 * DECISIONS §15: one OTLP log record → one event as native ingest takes it (a JSON event object),
 * which native ingest's own validation then judges and normalises (limits, severity, ts).
 */

/** The dataset of records with neither X-Ops-Dataset nor a resource service.name. */
export const fallbackDataset = 'otel';

/** A scalar attribute as text (a number or boolean in its JSON form); anything else: undefined. */
function scalarText(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** The first of `keys` the attributes hold as a non-empty scalar. */
function firstText(attributes: Record<string, Json>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = scalarText(attributes[key]);
    if (value) return value;
  }
  return undefined;
}

/** What SDKs put in service.name when the application set none (OpenTelemetry's resource semantic conventions). */
const unknownService = /^unknown_service(?::|$)/;

/**
 * Where a resource's records go, before the name is checked: X-Ops-Dataset, else service.name,
 * else `otel`. An SDK's `unknown_service[:<process>]` placeholder counts as no service.name.
 */
export function intendedDataset(resource: DecodedResource, header: string | undefined): string {
  const service = firstText(resource.attributes, ['service.name']);
  return header ?? (service && !unknownService.test(service) ? service : fallbackDataset);
}

/** `source` of a resource's records: service.instance.id, else host.name, else service.name. */
export function resourceSource(resource: DecodedResource): string | undefined {
  return firstText(resource.attributes, ['service.instance.id', 'host.name', 'service.name']);
}

const nsPerMs = 1_000_000n;

/**
 * The event object for one record. `payload` holds the record's attributes, then (winning over
 * an attribute of the same name) `body` when the body is not a string, `resource`, `scope`,
 * `trace_id`, `span_id` and `flags`; each of those is left out when the record has none.
 */
export function toEvent(resource: DecodedResource, scope: DecodedScope, record: DecodedRecord, source: string | undefined): Record<string, unknown> {
  const payload = Object.assign(Object.create(null) as Record<string, Json>, record.attributes);
  if (record.body !== undefined && typeof record.body !== 'string') payload.body = record.body;
  if (Object.keys(resource.attributes).length) payload.resource = resource.attributes;
  if (scope.name || scope.version) {
    const s: Record<string, Json> = {};
    if (scope.name) s.name = scope.name;
    if (scope.version) s.version = scope.version;
    payload.scope = s;
  }
  if (record.traceId) payload.trace_id = record.traceId;
  if (record.spanId) payload.span_id = record.spanId;
  if (record.flags) payload.flags = record.flags;
  const ns = record.timeUnixNano || record.observedTimeUnixNano;
  return {
    // epoch ms; absent → native ingest's default, now
    ts: ns ? Number(ns / nsPerMs) : undefined,
    // a SeverityNumber (1–24) or the text native ingest reads with its aliases; neither → the dataset's default
    severity: record.severityNumber !== 0 ? record.severityNumber : record.severityText || undefined,
    event: scalarText(record.attributes['event.name']) ?? (record.eventName || undefined),
    actor: scalarText(record.attributes['enduser.id']),
    source,
    message: typeof record.body === 'string' ? record.body : undefined,
    payload,
  };
}
