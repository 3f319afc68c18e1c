import type { StoredEvent } from '../stores/events/event-record.js';
import { lookupPayload, payloadOf, type SoqlQuery } from '../query/soql/index.js';
import { payloadReadings } from '../query/soql/literals.js';

/**
 * A condition a match monitor's events must meet, cheap to test for many monitors at once: a
 * top-level AND item `field == "text"` on event, actor, source, message or a payload key. An
 * event whose field is not that exact string cannot match the monitor (a false AND item makes
 * the filter false; a missing field fails `==`), so the matcher looks monitors up by the event's
 * value instead of running every predicate on every event, and runs the whole predicate only on
 * those found: the answer is the predicate's, exactly.
 */
export interface MatchGuard {
  /** What the guard reads, e.g. `event` or `payload.rule` (monitors guarded on the same field share one read). */
  field: string;
  read: (event: StoredEvent) => unknown;
  /** The one value an event's field must have (a string: `==` on a string is exact equality). */
  value: string;
}

/** The query's guard, or undefined when no top-level AND item is such an equality (the monitor is then tested on every event). */
export function matchGuard(query: SoqlQuery): MatchGuard | undefined {
  const filter = query.filter;
  const items = !filter ? [] : filter.type === 'and' ? filter.items : [filter];
  let payloadGuard: MatchGuard | undefined;
  for (const item of items) {
    if (item.type !== 'compare' || item.op !== '==' || item.value.type !== 'text') continue;
    const { field } = item;
    const value = item.value.text;
    if (field.kind === 'canonical') {
      const name = field.name;
      // Canonical first: reading it costs nothing, a payload key needs the payload parsed.
      if (name === 'event' || name === 'actor' || name === 'source' || name === 'message') return { field: name, read: (e) => e[name], value };
    } else if (!payloadGuard) {
      // Only a value that is text alone: an unquoted 150, true or null also equals a number, boolean or null.
      const r = payloadReadings(value, item.value.quoted);
      if (r.number === null && r.boolean === null && !r.isNull) {
        const path = field.path;
        payloadGuard = { field: `payload.${path.join('.')}`, read: (e) => lookupPayload(payloadOf(e), path), value };
      }
    }
  }
  return payloadGuard;
}

/** Monitors by guard: for each guarded field, the monitors by the value they need; and the unguarded. */
export interface GuardIndex<M> {
  fields: Array<{ read: (event: StoredEvent) => unknown; byValue: Map<string, M[]> }>;
  unguarded: M[];
}

export function guardIndex<M extends { guard: MatchGuard | undefined }>(monitors: readonly M[]): GuardIndex<M> {
  const byField = new Map<string, { read: (event: StoredEvent) => unknown; byValue: Map<string, M[]> }>();
  const unguarded: M[] = [];
  for (const m of monitors) {
    if (!m.guard) {
      unguarded.push(m);
      continue;
    }
    let entry = byField.get(m.guard.field);
    if (!entry) byField.set(m.guard.field, (entry = { read: m.guard.read, byValue: new Map() }));
    const list = entry.byValue.get(m.guard.value);
    if (list) list.push(m);
    else entry.byValue.set(m.guard.value, [m]);
  }
  return { fields: [...byField.values()], unguarded };
}
