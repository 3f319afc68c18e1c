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
import { severities, type Severity, type StoredEvent } from '../shared/event-record.js';
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
 * these, and toISOString was a visible part of a cached page's CPU. Anything unusual (before
 * 1970, past 9999, a fraction of a millisecond) takes toISOString itself; event-shape.test.ts
 * holds the two equal.
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

/** What an event's text was written from (EventPageWriter): the fields apiEventJson reads, and the text as UTF-8. */
interface Written {
  event: StoredEvent;
  orgId: string;
  projectId: string;
  bytes: Buffer;
}

/** A page's events as written last time: the entries, in order, and their text joined by commas. */
interface WrittenPage {
  entries: Written[];
  bytes: Buffer;
}

const comma = Buffer.from(',');

/**
 * A query page's events as the UTF-8 of their API texts joined by commas (the inside of
 * `"events":[…]`), written once and served again: a page asked again (a dashboard refreshing
 * a query, a client polling, the next page of a list that overlaps it) holds events written a
 * moment ago. Writing 100 events (~45 KB) and encoding the text cost ~0.5 ms of CPU a page;
 * found again, they cost a lookup and a comparison per event and one copy of the bytes.
 *
 * Exact: an event's text is used again only when the event and the tenant compare equal to the
 * ones it was written from, field by field (every field apiEventJson reads; the event store's
 * page cache hands out copies of the same events, so these mostly compare strings by identity),
 * and a page's bytes only when each of its events found the very entries of that page, in
 * order. Anything else is written afresh. Past `maxEvents` events or `maxPages` pages the
 * oldest go first.
 */
export class EventPageWriter {
  private readonly events = new Map<string, Written>();
  /** By the first event's id. */
  private readonly pages = new Map<string, WrittenPage>();
  /**
   * By the very array: the event store hands the same named page to every request while the
   * tenant's events and the datasets' names are unchanged (named-pages.ts), and nobody changes it.
   */
  private readonly arrays = new WeakMap<readonly StoredEvent[], { orgId: string; projectId: string; bytes: Buffer }>();

  constructor(
    private readonly maxEvents = 10_000,
    private readonly maxPages = 100,
  ) {}

  /** The events' API texts (apiEventJson with the tenant), joined by commas, as UTF-8. */
  write(events: readonly StoredEvent[], tenant: Tenant): Buffer {
    if (events.length === 0) return Buffer.alloc(0);
    const same = this.arrays.get(events);
    if (same !== undefined && same.orgId === tenant.orgId && same.projectId === tenant.projectId) return same.bytes;
    const bytes = this.joined(events, tenant);
    this.arrays.set(events, { orgId: tenant.orgId, projectId: tenant.projectId, bytes });
    return bytes;
  }

  private joined(events: readonly StoredEvent[], tenant: Tenant): Buffer {
    const entries = events.map((e) => this.entry(e, tenant));
    const first = events[0]!.event_id;
    const known = this.pages.get(first);
    if (known !== undefined && known.entries.length === entries.length && known.entries.every((w, i) => w === entries[i])) return known.bytes;
    const parts: Buffer[] = [];
    for (const w of entries) {
      if (parts.length) parts.push(comma);
      parts.push(w.bytes);
    }
    const bytes = Buffer.concat(parts);
    remember(this.pages, this.maxPages, first, known, { entries, bytes });
    return bytes;
  }

  private entry(e: StoredEvent, tenant: Tenant): Written {
    const hit = this.events.get(e.event_id);
    if (hit !== undefined && hit.orgId === tenant.orgId && hit.projectId === tenant.projectId && sameText(hit.event, e)) return hit;
    const written: Written = { event: e, orgId: tenant.orgId, projectId: tenant.projectId, bytes: Buffer.from(apiEventJson(e, tenant)) };
    remember(this.events, this.maxEvents, e.event_id, hit, written);
    return written;
  }
}

/** Sets `key` in a map bounded to `max` entries (the oldest goes first), replacing `old` if there was one. */
function remember<T>(map: Map<string, T>, max: number, key: string, old: T | undefined, value: T): void {
  if (old !== undefined) map.delete(key);
  else if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** Whether two events write the same API text (every field apiEventJson reads). */
function sameText(a: StoredEvent, b: StoredEvent): boolean {
  return (
    a.event_id === b.event_id &&
    a.ts === b.ts &&
    a.ingested_at === b.ingested_at &&
    a.dataset === b.dataset &&
    a.severity === b.severity &&
    a.event === b.event &&
    a.actor === b.actor &&
    a.source === b.source &&
    a.message === b.message &&
    a.payloadJson === b.payloadJson &&
    a.bytes_raw === b.bytes_raw
  );
}
