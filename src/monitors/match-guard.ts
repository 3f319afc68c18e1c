import type { StoredEvent } from '../engine/event-record.js';
import { lookupPayload, payloadOf, type SoqlQuery } from '../query/soql/index.js';
import { isWildcard, payloadReadings } from '../query/soql/literals.js';
import { foldCase } from '../query/soql/text.js';

/**
 * A condition a match monitor's events must meet, cheap to test for many monitors at once: a
 * top-level AND item on event, actor, source, message or a payload key that is
 * - `field == "text"` (`equals`): monitors are looked up by the event's value, or
 * - `field:"text"` without a wildcard (`contains`): the event's value is case-folded once and
 *   searched for each monitor's text.
 * An event whose field fails the item cannot match the monitor (a false AND item makes the
 * filter false; a missing field fails `==` and `:`), so the matcher runs a monitor's whole
 * predicate only on the events its guard lets through: the answer is the predicate's, exactly.
 */
export type MatchGuard =
  | { kind: 'equals'; field: string; read: (event: StoredEvent) => unknown; value: string }
  | { kind: 'contains'; field: string; read: (event: StoredEvent) => unknown; needle: string };

const canonicalText = ['event', 'actor', 'source', 'message'] as const;
type CanonicalText = (typeof canonicalText)[number];
const isCanonicalText = (name: string): name is CanonicalText => (canonicalText as readonly string[]).includes(name);

/** The query's guard, or undefined when no top-level AND item is one (the monitor is then tested on every event). */
export function matchGuard(query: SoqlQuery): MatchGuard | undefined {
  const filter = query.filter;
  const items = !filter ? [] : filter.type === 'and' ? filter.items : [filter];
  // Best first: an equality on a canonical field (nothing to parse), on a payload key, then a contains.
  const found: MatchGuard[] = [];
  const rank = (g: MatchGuard) => (g.kind === 'equals' ? 0 : 2) + (g.field.startsWith('payload.') ? 1 : 0);
  for (const item of items) {
    if (item.type !== 'compare' || (item.op !== '==' && item.op !== ':') || item.value.type !== 'text') continue;
    const { field } = item;
    const { text, quoted } = item.value;
    if (item.op === ':' && isWildcard(text, quoted)) continue;
    let name: string;
    let read: (event: StoredEvent) => unknown;
    if (field.kind === 'canonical') {
      if (!isCanonicalText(field.name)) continue;
      const canonical = field.name;
      name = canonical;
      read = (e) => e[canonical];
    } else {
      // Only a value that is text alone: an unquoted 150, true or null also equals a number, boolean or null.
      const r = payloadReadings(text, quoted);
      if (r.number !== null || r.boolean !== null || r.isNull) continue;
      name = `payload.${field.path.join('.')}`;
      const path = field.path;
      read = (e) => lookupPayload(payloadOf(e), path);
    }
    found.push(item.op === '==' ? { kind: 'equals', field: name, read, value: text } : { kind: 'contains', field: name, read, needle: foldCase(text) });
  }
  return found.sort((a, b) => rank(a) - rank(b))[0];
}

/** Monitors by guard: for each guarded field, the monitors by the value they need or the text they contain; and the unguarded. */
export interface GuardIndex<M> {
  equals: Array<{ read: (event: StoredEvent) => unknown; byValue: Map<string, M[]> }>;
  contains: Array<{ read: (event: StoredEvent) => unknown; needles: Array<{ needle: string; monitors: M[] }> }>;
  unguarded: M[];
}

export function guardIndex<M extends { guard: MatchGuard | undefined }>(monitors: readonly M[]): GuardIndex<M> {
  const equals = new Map<string, GuardIndex<M>['equals'][number]>();
  const contains = new Map<string, GuardIndex<M>['contains'][number]>();
  const unguarded: M[] = [];
  for (const m of monitors) {
    const guard = m.guard;
    if (!guard) {
      unguarded.push(m);
    } else if (guard.kind === 'equals') {
      let entry = equals.get(guard.field);
      if (!entry) equals.set(guard.field, (entry = { read: guard.read, byValue: new Map() }));
      const list = entry.byValue.get(guard.value);
      if (list) list.push(m);
      else entry.byValue.set(guard.value, [m]);
    } else {
      let entry = contains.get(guard.field);
      if (!entry) contains.set(guard.field, (entry = { read: guard.read, needles: [] }));
      const same = entry.needles.find((n) => n.needle === guard.needle);
      if (same) same.monitors.push(m);
      else entry.needles.push({ needle: guard.needle, monitors: [m] });
    }
  }
  return { equals: [...equals.values()], contains: [...contains.values()], unguarded };
}

/** Calls `visit` once for every monitor the event may match: those whose guard it passes, and the unguarded. */
export function forEachCandidate<M>(index: GuardIndex<M>, event: StoredEvent, visit: (monitor: M) => void): void {
  for (const field of index.equals) {
    const value = field.read(event);
    const monitors = typeof value === 'string' ? field.byValue.get(value) : undefined;
    if (monitors) for (const m of monitors) visit(m);
  }
  for (const field of index.contains) {
    const value = field.read(event);
    if (typeof value !== 'string') continue;
    const folded = foldCase(value);
    for (const { needle, monitors } of field.needles) if (folded.includes(needle)) for (const m of monitors) visit(m);
  }
  for (const m of index.unguarded) visit(m);
}
