import { isUuidAnyCase, newEventId } from '../../shared/ids.js';
import type { NewEvent } from '../../engine/event-store.js';
import { parsedPayload } from '../../shared/event-record.js';
import { ingestLimits, measure, payloadLimits, shapeMessage, tooWide } from './limits.js';
import { levelSeverity, parseSeverity, severityHint } from './severity.js';
import { parseTs } from './timestamp.js';

/**
 * The one mapping of an event to its columns and payload, whichever protocol it came by
 * (docs/shippers.md, "Mapping"): normalise for a JSON event object, normaliseMapped for the
 * items of the shared insert path (insert.ts), each failing alone by its index.
 */

export interface IngestFailure {
  index: number;
  error: { code: 'bad_request' | 'too_large'; message: string };
}

export interface ParsedIngest {
  events: NewEvent[];
  failures: IngestFailure[];
}

export interface IngestDefaults {
  datasetId: string;
  /** index into severities, used when an event has none */
  defaultSeverity: number;
  now: number;
  /** Intended dataset name when the events overflow into `default` (payload._dataset). */
  overflowFrom: string | undefined;
}

const textFields = ['event', 'actor', 'source', 'message'] as const;

class EventError extends Error {}
class EventTooLarge extends Error {}

/** The error of a canonical field holding an object or array (or, for ts, any bad value). */
function notScalarMessage(field: string): string {
  switch (field) {
    case 'ts':
      return 'ts must be an ISO 8601 date-time or epoch milliseconds';
    case 'severity':
      return `severity must be a string or a number; ${severityHint}`;
    case 'event_id':
      return 'event_id must be a UUID';
    default:
      return `${field} must be a string`;
  }
}

/** The error of a payload past a bound (measure's tooDeep or tooWide). */
const shapeError = (result: number): EventError => new EventError(shapeMessage(result));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether an object has a key of its own that JSON writes (a `__proto__` assigned is not one). */
function anyKey(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/**
 * What a protocol knows of an event besides its JSON object (DECISIONS §21): each is used only
 * where the object says nothing, so the same object stores the same row on every route.
 */
export interface EventContext {
  /** The ts when the object has none (a Loki entry's timestamp), epoch ms. */
  ts: number | undefined;
  /** The severity index when the object has none (a Loki stream's level label). */
  severity: number | undefined;
  /** The client event id, a lower-case UUID, when the object has no `event_id` (a bulk `_id`'s). */
  eventId: string | undefined;
  /** `payload.labels`, over the object's own key of that name (Loki's stream labels and structured metadata). */
  labels: Record<string, string> | undefined;
}

/**
 * The mapping of one event object to its columns and payload, the same for native ingest (an
 * NDJSON line, an element of a JSON array), OTLP's records and the shipper routes' JSON lines and
 * documents (docs/shippers.md, "Mapping"): `ts`, `severity`, `event`, `actor`, `source`,
 * `message`, `event_id` and `payload` by their own names, checked as DECISIONS §9 says (a value
 * of the wrong kind refuses the event); where a field's own key is absent, its aliases, in this
 * order, the first whose value the field takes (else they are payload keys like any other):
 * ts ← `@timestamp`, `timestamp`, `time` (ISO 8601 or epoch ms); severity ← `level`,
 * `log.level`, `log: {level}` (levelSeverity; the nested one leaves the rest of `log` in the
 * payload); message ← `msg` (a string). Every other top-level key moves into the payload, under
 * the keys of `payload`. `bytes` is the event's size as sent, or -1 to measure it here (an
 * element of a JSON array) once its shape is known to be safe to serialise.
 */
export function normalise(value: unknown, bytes: number, d: IngestDefaults, context?: EventContext): NewEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new EventError('an event must be a JSON object');
  const e = value as Record<string, unknown>;
  // The aliases a field's own key leaves to be read (named loads: few events have them).
  let tsKey: string | undefined;
  let aliasTs: number | undefined;
  if (e.ts === undefined || e.ts === null) {
    if ((aliasTs = aliasTime(e['@timestamp'])) !== undefined) tsKey = '@timestamp';
    else if ((aliasTs = aliasTime(e.timestamp)) !== undefined) tsKey = 'timestamp';
    else if ((aliasTs = aliasTime(e.time)) !== undefined) tsKey = 'time';
  }
  let levelKey: string | undefined;
  let aliasSeverity: number | undefined;
  let logRest: Record<string, unknown> | undefined;
  if (e.severity === undefined || e.severity === null) {
    if ((aliasSeverity = levelSeverity(e.level)) !== undefined) levelKey = 'level';
    else if ((aliasSeverity = levelSeverity(e['log.level'])) !== undefined) levelKey = 'log.level';
    else if (isObject(e.log) && (aliasSeverity = levelSeverity(e.log.level)) !== undefined) {
      levelKey = 'log';
      // The rest of ECS's `log` (logger, origin…) stays; copied as own keys, `__proto__` too.
      const { level: _level, ...rest } = e.log;
      if (anyKey(rest)) logRest = rest;
    }
  }
  const msgKey = (e.message === undefined || e.message === null) && typeof e.msg === 'string' ? 'msg' : undefined;
  let extras: Record<string, unknown> | undefined;
  // The payload's bounds, in the same pass: top-level keys other than the fields and the
  // aliases taken are payload keys (their values at level 2).
  let keys = 0;
  for (const key in e) {
    let v = e[key];
    switch (key) {
      case 'payload':
        if (typeof v === 'object' && v !== null) keys = measure(v, 1, keys);
        break;
      case 'ts': case 'severity': case 'event': case 'actor': case 'source': case 'message': case 'event_id':
        // Scalars only (checked below); a structure fails here, before anything serialises it.
        if (typeof v === 'object' && v !== null) throw new EventError(notScalarMessage(key));
        break;
      default:
        if (key === tsKey || key === levelKey || key === msgKey) {
          if (key !== 'log' || logRest === undefined) continue;
          v = logRest;
        }
        (extras ??= {})[key] = v;
        if (++keys > payloadLimits.keys) keys = tooWide;
        else if (typeof v === 'object' && v !== null) keys = measure(v, 2, keys);
    }
    if (keys < 0) throw shapeError(keys);
  }
  const labels = context?.labels;
  if (labels !== undefined) {
    keys = measure(labels, 2, keys + 1);
    if (keys > payloadLimits.keys) keys = tooWide;
    if (keys < 0) throw shapeError(keys);
  }
  if (bytes < 0) {
    bytes = Buffer.byteLength(JSON.stringify(e));
    if (bytes > ingestLimits.eventBytes) throw new EventTooLarge();
  }
  const ts = parseTs(e.ts);
  if (Number.isNaN(ts)) throw new EventError(notScalarMessage('ts'));
  const severity = parseSeverity(e.severity);
  if (severity === -1) throw new EventError(`unknown severity ${JSON.stringify(e.severity)}; ${severityHint}`);
  for (const field of textFields) {
    const v = e[field];
    if (v !== undefined && v !== null && typeof v !== 'string') throw new EventError(`${field} must be a string`);
  }
  const payload = e.payload;
  if (payload !== undefined && (payload === null || typeof payload !== 'object' || Array.isArray(payload))) {
    throw new EventError('payload must be a JSON object');
  }
  let eventId: string;
  let clientEventId = e.event_id !== undefined && e.event_id !== null;
  if (clientEventId) {
    if (typeof e.event_id !== 'string' || !isUuidAnyCase(e.event_id)) throw new EventError('event_id must be a UUID');
    eventId = e.event_id.toLowerCase();
  } else if (context?.eventId !== undefined) {
    eventId = context.eventId;
    clientEventId = true;
  } else {
    eventId = newEventId();
  }
  let payloadObject: Record<string, unknown>;
  if (extras || labels !== undefined || d.overflowFrom !== undefined) {
    payloadObject = { ...extras, ...(payload as Record<string, unknown> | undefined) };
    if (labels !== undefined) payloadObject.labels = labels;
    if (d.overflowFrom !== undefined) payloadObject._dataset = d.overflowFrom;
  } else {
    payloadObject = (payload as Record<string, unknown> | undefined) ?? emptyPayload;
  }
  const written = payloadObject === emptyPayload ? '{}' : JSON.stringify(payloadObject);
  const payloadText = withoutLoneSurrogates(written);
  return {
    datasetId: d.datasetId,
    eventId,
    clientEventId,
    ts: ts ?? aliasTs ?? context?.ts ?? d.now,
    severity: severity ?? aliasSeverity ?? context?.severity ?? d.defaultSeverity,
    bytesRaw: bytes,
    event: (e.event as string | null | undefined) ?? '',
    actor: (e.actor as string | null | undefined) ?? null,
    source: (e.source as string | null | undefined) ?? null,
    message: (e.message as string | null | undefined) ?? (msgKey ? (e.msg as string) : ''),
    payload: payloadText,
    [parsedPayload]: payloadText === written ? payloadObject : undefined,
  };
}

/** An alias of ts: its epoch ms when it holds a ts (parseTs's), else undefined (it stays in the payload). */
function aliasTime(value: unknown): number | undefined {
  if (value === undefined || value === null || (typeof value !== 'string' && typeof value !== 'number')) return undefined;
  const ts = parseTs(value);
  return ts === undefined || Number.isNaN(ts) ? undefined : ts;
}

const emptyPayload: Record<string, unknown> = Object.freeze({});

/** A `\\udXXX` escape of a surrogate (JSON.stringify escapes only lone ones), not preceded by an escaped backslash. */
const loneSurrogateEscape = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/gi;

/**
 * JSON text from JSON.stringify with its lone surrogates as U+FFFD. JSON.parse accepts a lone
 * surrogate ("\\ud800") and JSON.stringify writes it back as that escape, which DuckDB's JSON
 * reader refuses for the whole payload.
 */
export const withoutLoneSurrogates = (json: string): string => (json.includes('\\ud') ? json.replace(loneSurrogateEscape, '$1\\ufffd') : json);

/** The failure of an event past 256 KB, by its index. */
export const tooLargeFailure = (index: number): IngestFailure => ({
  index,
  error: { code: 'too_large', message: `an event may be at most ${ingestLimits.eventBytes} bytes` },
});

/** Records normalise's refusal of the event at `index` as its failure; anything else is thrown on. */
export function fail(failures: IngestFailure[], index: number, error: unknown): void {
  if (error instanceof EventError) failures.push({ index, error: { code: 'bad_request', message: error.message } });
  else if (error instanceof EventTooLarge) failures.push(tooLargeFailure(index));
  else throw error;
}

/**
 * A log line, record or document a protocol has read, for normaliseMapped: its JSON object with
 * what the protocol knows besides (EventContext), or a line that is not a JSON object.
 */
export interface MappedEvent extends EventContext {
  /** The line's or document's JSON object; undefined for a line that is not one. */
  object: Record<string, unknown> | undefined;
  /** A line that is not a JSON object: the event's message (else undefined). */
  line: string | undefined;
  /**
   * Its size as sent (the line, the document), in bytes: bytes_raw, and what the 256 KB bound
   * measures; -1 to measure the object's JSON instead (an OTLP record, whose wire form is not JSON).
   */
  bytes: number;
  /**
   * The payload of a line that is not a JSON object, `{labels}` or `{}`, with its JSON: a Loki
   * stream's plain-text lines (what Promtail and Alloy send tailing a file) share one, written
   * once per stream instead of once per line. Undefined for a JSON object.
   */
  plain: PlainPayload | undefined;
}

export interface PlainPayload {
  /** Read only (match monitors read it as the parsed payload). */
  object: Record<string, unknown>;
  text: string;
}

/** The plain payload of lines with these labels (or none). */
export function plainPayload(labels: Record<string, string> | undefined): PlainPayload {
  return labels === undefined ? { object: emptyPayload, text: '{}' } : { object: Object.freeze({ labels }), text: JSON.stringify({ labels }) };
}

/**
 * The items of the shared insert path (insert.ts), each failing alone by its index: a JSON
 * object is normalised as native ingest normalises an event (normalise, with the item's
 * context); a line that is not one is the message, with the context's ts, severity and labels.
 * Held to native ingest by property tests (src/ingest/mapped.test.ts).
 */
export function normaliseMapped(items: readonly MappedEvent[], d: IngestDefaults): ParsedIngest {
  const events: NewEvent[] = [];
  const failures: IngestFailure[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    if (item.bytes > ingestLimits.eventBytes) {
      failures.push(tooLargeFailure(index));
      continue;
    }
    // The item keeps its parsed object: a request whose dataset was created by another request
    // meanwhile builds its events again from the same items (storeToTargets).
    const object = item.object;
    if (object !== undefined) {
      try {
        events.push(normalise(object, item.bytes, d, item));
      } catch (error) {
        fail(failures, index, error);
      }
      continue;
    }
    events.push(plainEvent(item, d));
  }
  return { events, failures };
}

/** A line that is not a JSON object: the message, the context's ts and severity, `{labels}` as the payload. */
function plainEvent(item: MappedEvent, d: IngestDefaults): NewEvent {
  const plain = item.plain ?? plainPayload(item.labels);
  let payloadObject = plain.object;
  let written = plain.text;
  if (d.overflowFrom !== undefined) {
    payloadObject = { ...payloadObject, _dataset: d.overflowFrom };
    written = JSON.stringify(payloadObject);
  }
  const payloadText = withoutLoneSurrogates(written);
  const clientEventId = item.eventId !== undefined;
  return {
    datasetId: d.datasetId,
    eventId: clientEventId ? item.eventId! : newEventId(),
    clientEventId,
    ts: item.ts ?? d.now,
    severity: item.severity ?? d.defaultSeverity,
    bytesRaw: item.bytes,
    event: '',
    actor: null,
    source: null,
    message: item.line ?? '',
    payload: payloadText,
    [parsedPayload]: payloadText === written ? payloadObject : undefined,
  };
}
