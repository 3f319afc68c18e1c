import { isAscii } from 'node:buffer';
import { AppError, badRequest, tooLarge } from '../errors/app-error.js';
import { isUuidAnyCase, newEventId } from '../shared/ids.js';
import type { NewEvent } from '../engine/event-store.js';
import { parsedPayload } from '../shared/event-record.js';

/** DECISIONS §9 limits (MB/KB are decimal, as everywhere in the product). */
export const ingestLimits = { bodyBytes: 10_000_000, events: 10_000, eventBytes: 256_000 } as const;

/**
 * Our bounds on one event's payload (docs/decisions.md, "Hardening: event bounds"): objects and
 * arrays nest at most `depth` levels (the payload object is level 1), and the payload holds at
 * most `keys` keys, counting the keys of nested objects (inside arrays too) and the top-level
 * keys that move into the payload. They bound what one event costs schema discovery, group by
 * and JSON.stringify (whose recursion overflowed the stack on ~5,000 levels).
 */
export const payloadLimits = { depth: 32, keys: 1_000 } as const;

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

/**
 * Severity names any ingest reads (DECISIONS §9's, and §21's syslog names `notice` and `alert`
 * with winston's `http`, `verbose` and `silly`): one table for native ingest, OTLP and the shipper
 * routes, since an event's fields are mapped by one function whichever route it came by. A Map,
 * not an object: `constructor` must not find Object's.
 */
const severityNames = new Map<string, number>(
  Object.entries({
    debug: 0, trace: 0, verbose: 0, silly: 0,
    info: 1, information: 1, informational: 1, notice: 1, http: 1,
    warn: 2, warning: 2,
    error: 3, err: 3,
    fatal: 4, critical: 4, crit: 4, panic: 4, emergency: 4, emerg: 4, alert: 4,
  }),
);
const otelText = /^(trace|debug|info|warn|error|fatal)[1-4]$/;

/** A severity as sent under `severity` → its index; undefined = absent (use the default); -1 = invalid. Numbers are OpenTelemetry's. */
export function parseSeverity(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const known = severityNames.get(value) ?? severityNames.get(value.toLowerCase());
    if (known !== undefined) return known;
    const otel = otelText.exec(value.toLowerCase());
    return otel ? severityNames.get(otel[1]!)! : -1;
  }
  if (typeof value === 'number' && Number.isInteger(value)) {
    // OpenTelemetry SeverityNumber: 1-4 TRACE, 5-8 DEBUG, 9-12 INFO, 13-16 WARN, 17-20 ERROR, 21-24 FATAL; 0 unspecified.
    if (value === 0) return undefined;
    if (value >= 1 && value <= 24) return Math.max(0, Math.ceil(value / 4) - 2);
  }
  return -1;
}

/**
 * A level as sent under an alias of severity (`level`, `log.level`) or in a Loki label → its
 * index; undefined when it is not one we know (the value then stays in the payload: these
 * names are others' too, and a log line is never refused for its level). Names as
 * parseSeverity's; numbers are pino's and bunyan's levels (10 trace, 20 debug, 30 info, 40 warn,
 * 50 error, 60 fatal; a custom level in between counts as the one below, 70 and up fatal), the
 * programs that write a numeric `level`.
 */
export function levelSeverity(value: unknown): number | undefined {
  if (typeof value === 'number') {
    if (!(value >= 10)) return undefined; // NaN too
    if (value < 30) return 0;
    if (value < 40) return 1;
    if (value < 50) return 2;
    if (value < 60) return 3;
    return value === Infinity ? undefined : 4;
  }
  if (typeof value !== 'string') return undefined;
  const index = parseSeverity(value)!;
  return index < 0 ? undefined : index;
}

const isoPattern = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const maxTs = 8_640_000_000_000_000;

/** A ts as sent → epoch ms; undefined = absent; NaN = invalid. */
export function parseTs(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 && value <= maxTs ? Math.floor(value) : NaN;
  if (typeof value === 'string') {
    const fast = parseIsoFast(value);
    if (fast === fast) return fast >= 0 ? fast : NaN; // not NaN
    return parseIsoSlow(value);
  }
  return NaN;
}

/** The definition: the pattern above, then Date.parse. */
export function parseIsoSlow(value: string): number {
  if (!isoPattern.test(value)) return NaN;
  const ms = Date.parse(value.replace(' ', 'T'));
  return Number.isFinite(ms) && ms >= 0 ? ms : NaN;
}

const digit = (s: string, i: number): number => s.charCodeAt(i) - 48;
const two = (s: string, i: number): number => {
  const a = digit(s, i);
  const b = digit(s, i + 1);
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
};

/** Days from 1970-01-01 to year-month-01 (proleptic Gregorian; month 1–12). */
function daysToMonth(year: number, month: number): number {
  // Howard Hinnant's days_from_civil, for the first of the month.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = month > 2 ? month - 3 : month + 9;
  const doy = Math.floor((153 * mp + 2) / 5);
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * parseIsoSlow's answer without a regular expression or Date.parse (~0.8 of the 4 µs an
 * RFC 3339 event cost the event loop), for the forms clients send: the pattern's grammar with
 * month 1–12, day 1–31 (Date.parse rolls Feb 30 over to March, and so does this), hour 0–23,
 * minute and second 0–59, offset hour 0–23 and minute 0–59. NaN for anything else, which
 * parseIsoSlow then decides (24:00, a second 60, garbage): the same answer either way, by a
 * property test against Date.parse. May return a negative value (the caller refuses it).
 */
export function parseIsoFast(s: string): number {
  const n = s.length;
  if (n < 17 || n > 35) return NaN;
  const y1 = two(s, 0);
  const y2 = two(s, 2);
  if (y1 < 0 || y2 < 0 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return NaN;
  const month = two(s, 5);
  const day = two(s, 8);
  const sep = s.charCodeAt(10);
  if (sep !== 84 && sep !== 116 && sep !== 32) return NaN; // T t space
  const hour = two(s, 11);
  const minute = two(s, 14);
  if (s.charCodeAt(13) !== 58 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59) return NaN;
  let i = 16;
  let second = 0;
  let ms = 0;
  if (s.charCodeAt(i) === 58) {
    second = two(s, i + 1);
    if (second < 0 || second > 59) return NaN;
    i += 3;
    if (s.charCodeAt(i) === 46) {
      // 1–9 digits, the first three counted (Date.parse truncates to the millisecond).
      let k = 0;
      for (i++; k < 9; k++, i++) {
        const d = digit(s, i);
        if (!(d >= 0 && d <= 9)) break;
        if (k < 3) ms = ms * 10 + d;
      }
      if (k === 0) return NaN;
      if (k === 1) ms *= 100;
      else if (k === 2) ms *= 10;
    }
  }
  let offset = 0;
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) {
    i++; // Z z
  } else if (z === 43 || z === 45) {
    const oh = two(s, i + 1);
    const colon = s.charCodeAt(i + 3) === 58 ? 1 : 0;
    const om = two(s, i + 3 + colon);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return NaN;
    offset = (oh * 60 + om) * (z === 43 ? 1 : -1);
    i += 5 + colon;
  } else return NaN;
  if (i !== n) return NaN;
  const days = daysToMonth(y1 * 100 + y2, month) + day - 1;
  return ((days * 24 + hour) * 60 + minute - offset) * 60_000 + second * 1000 + ms;
}

const textFields = ['event', 'actor', 'source', 'message'] as const;

class EventError extends Error {}
class EventTooLarge extends Error {}

const severityHint = 'use debug, info, warn, error, fatal, an alias or an OpenTelemetry severity number';

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

const tooDeep = -1;
const tooWide = -2;

/**
 * One pass over a payload value at nesting level `depth`: the running key count `keys` plus
 * this value's keys, or tooDeep / tooWide as soon as a bound is passed. The recursion stops
 * one level past the depth bound, so it cannot overflow whatever JSON.parse produced.
 */
function measure(value: object, depth: number, keys: number): number {
  if (depth > payloadLimits.depth) return tooDeep;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v === 'object' && v !== null) {
        keys = measure(v, depth + 1, keys);
        if (keys < 0) return keys;
      }
    }
    return keys;
  }
  for (const key in value) {
    if (++keys > payloadLimits.keys) return tooWide;
    const v: unknown = (value as Record<string, unknown>)[key];
    if (typeof v === 'object' && v !== null) {
      keys = measure(v, depth + 1, keys);
      if (keys < 0) return keys;
    }
  }
  return keys;
}

/** `subject` names what was measured: an event's payload, or a log entry's meta. */
function shapeError(result: number, subject = 'payload'): EventError {
  return result === tooDeep
    ? new EventError(`the ${subject} nests objects and arrays more than ${payloadLimits.depth} levels deep (the ${subject} object is level 1); at most ${payloadLimits.depth} levels are accepted`)
    : new EventError(`the ${subject} has more than ${payloadLimits.keys} keys (counting the keys of nested objects); at most ${payloadLimits.keys} are accepted`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether an object has a key of its own that JSON writes (a `__proto__` assigned is not one). */
function anyKey(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/**
 * What a shipper route knows of an event besides its JSON object (DECISIONS §21): each is used
 * only where the object says nothing, so the same object stores the same row on every route.
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
function normalise(value: unknown, bytes: number, d: IngestDefaults, context?: EventContext): NewEvent {
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

const tooLargeFailure = (index: number): IngestFailure => ({
  index,
  error: { code: 'too_large', message: `an event may be at most ${ingestLimits.eventBytes} bytes` },
});

function fail(failures: IngestFailure[], index: number, error: unknown): void {
  if (error instanceof EventError) failures.push({ index, error: { code: 'bad_request', message: error.message } });
  else if (error instanceof EventTooLarge) failures.push(tooLargeFailure(index));
  else throw error;
}

/** NDJSON: each non-blank line is an event; a malformed line fails alone, with its index. */
export function parseNdjson(buffer: Buffer, d: IngestDefaults): ParsedIngest {
  const text = buffer.toString('utf8');
  // ASCII: a line's characters are its bytes. Else each line's bytes are counted in the body as
  // sent (a byte 0x0a is a line break in UTF-8 and nothing else, so the text's lines are the
  // body's): counting the decoded text would count an invalid byte as U+FFFD's three.
  const ascii = isAscii(buffer);
  let byteStart = 0;
  const events: NewEvent[] = [];
  const failures: IngestFailure[] = [];
  let index = 0;
  let syntaxErrors = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    let lineEnd = end;
    if (lineEnd > start && text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
    const line = text.slice(start, lineEnd);
    start = end + 1;
    let bytes = line.length;
    if (!ascii) {
      const byteEnd = end === text.length ? buffer.length : buffer.indexOf(10, byteStart);
      bytes = byteEnd - byteStart - (lineEnd < end ? 1 : 0);
      byteStart = byteEnd + 1;
    }
    if (line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === '')) continue;
    if (index >= ingestLimits.events) throw tooLarge(ingestLimits.bodyBytes, `a request may carry at most ${ingestLimits.events} events`);
    if (bytes > ingestLimits.eventBytes) {
      failures.push(tooLargeFailure(index++));
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      syntaxErrors++;
      failures.push({ index: index++, error: { code: 'bad_request', message: 'this line is not valid JSON' } });
      continue;
    }
    try {
      events.push(normalise(value, bytes, d));
    } catch (error) {
      fail(failures, index, error);
    }
    index++;
  }
  if (index === 0) throw badRequest('the request body holds no events');
  if (syntaxErrors === index) throw badRequest('the request body is not JSON or NDJSON');
  return { events, failures };
}

/** A body that failed JSON.parse: do its first two non-empty lines each hold a JSON object? */
function looksLikeNdjson(buffer: Buffer): boolean {
  const lines = buffer.toString('utf8', 0, Math.min(buffer.length, 2 * ingestLimits.eventBytes)).split('\n');
  let objects = 0;
  for (const line of lines) {
    if (!line.trim()) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
    } catch {
      return false;
    }
    if (++objects === 2) return true;
  }
  return false;
}

/**
 * The payload bounds for a payload built by another path than ingest (a log entry's `meta`):
 * the message of the bound it passes, or undefined within them. Safe on any depth.
 */
export function payloadShapeProblem(payload: object, subject: string): string | undefined {
  const result = measure(payload, 1, 0);
  return result < 0 ? shapeError(result, subject).message : undefined;
}

/** application/json: an array of events or one event object. */
export function parseJsonBody(buffer: Buffer, d: IngestDefaults): ParsedIngest {
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString('utf8'));
  } catch {
    throw badRequest(
      looksLikeNdjson(buffer)
        ? 'the request body is one JSON object per line (NDJSON), not one JSON value: send it with Content-Type: application/x-ndjson'
        : 'the request body is not valid JSON',
    );
  }
  const single = !Array.isArray(value);
  if (single && (value === null || typeof value !== 'object')) throw badRequest('the body must be a JSON array of events or one event object');
  const items = single ? [value] : (value as unknown[]);
  if (items.length === 0) throw badRequest('the request body holds no events');
  if (items.length > ingestLimits.events) throw tooLarge(ingestLimits.bodyBytes, `a request may carry at most ${ingestLimits.events} events`);
  const events: NewEvent[] = [];
  const failures: IngestFailure[] = [];
  // JSON.parse builds any depth; nothing serialises an element before normalise has bounded
  // its shape (an element's size is measured there, by serialising it).
  items.forEach((item, index) => {
    if (single && buffer.length > ingestLimits.eventBytes) {
      failures.push(tooLargeFailure(index));
      return;
    }
    try {
      events.push(normalise(item, single ? buffer.length : -1, d));
    } catch (error) {
      fail(failures, index, error);
    }
  });
  return { events, failures };
}

/**
 * Events another wire format has already parsed and mapped to event objects (OTLP, src/otlp;
 * the shipper routes, src/shippers): each validated and normalised as an element of a JSON array
 * is, failing alone by its index. `sizes`, when given, are the events' sizes as sent (a log
 * line, a bulk document): `bytes_raw`, and what the 256 KB bound measures, without serialising
 * each event again; without them the mapped event's JSON is measured.
 */
export function normaliseEvents(items: readonly unknown[], d: IngestDefaults, sizes?: readonly number[]): ParsedIngest {
  const events: NewEvent[] = [];
  const failures: IngestFailure[] = [];
  items.forEach((item, index) => {
    const size = sizes?.[index] ?? -1;
    if (size > ingestLimits.eventBytes) {
      failures.push(tooLargeFailure(index));
      return;
    }
    try {
      events.push(normalise(item, size, d));
    } catch (error) {
      fail(failures, index, error);
    }
  });
  return { events, failures };
}

/**
 * A log line or document a shipper route has read (src/shippers), for normaliseMapped: its JSON
 * object with what the route knows besides (EventContext), or a line that is not a JSON object.
 */
export interface MappedEvent extends EventContext {
  /** The line's or document's JSON object; undefined for a line that is not one. */
  object: Record<string, unknown> | undefined;
  /** A line that is not a JSON object: the event's message (else undefined). */
  line: string | undefined;
  /** Its size as sent (the line, the document), in bytes: bytes_raw, and what the 256 KB bound measures. */
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
 * The shipper routes' items, each failing alone by its index: a JSON object is normalised as
 * native ingest normalises an event (normalise, with the item's context); a line that is not
 * one is the message, with the context's ts, severity and labels. Held to native ingest by
 * property tests (src/shippers/mapped.test.ts).
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

export type BodyFormat = 'json' | 'ndjson';

/** The body format from Content-Type; anything else is 415. */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  const type = (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines', 'application/jsonlines'].includes(type)) {
    return 'ndjson';
  }
  if (type === 'application/json' || type.endsWith('+json') || type === '') return 'json';
  throw new AppError('unsupported_type', `content type ${type} is not accepted here; send application/json or application/x-ndjson`);
}
