import { parsedPayload, severities, type StoredEvent } from '../shared/event-record.js';
import type { NewEvent } from '../engine/event-store.js';
import type { Expr } from '../soql/ast.js';
import { compilePredicate, lookupPayload, payloadOf, payloadOfText, type SoqlQuery } from '../soql/index.js';
import { isWildcard, payloadReadings } from '../soql/literals.js';
import { foldCase } from '../soql/text.js';

/**
 * A condition a match monitor's events must meet, cheap to test for many monitors at once: a
 * top-level AND item on event, actor, source, message or a payload key that is
 * - `field == "text"` (`equals`): monitors are looked up by the event's value, or
 * - `field:"text"` without a wildcard (`contains`): the event's value is case-folded once and
 *   searched for each monitor's text.
 * An event whose field fails the item cannot match the monitor (a false AND item makes the
 * filter false; a missing field fails `==` and `:`), so the matcher runs a monitor's whole
 * predicate only on the events its guard lets through: the answer is the predicate's, exactly.
 * A monitor without one may still have severity levels (`severityLevels`), looked up by the
 * event's severity.
 *
 * Guards read the event as ingest made it (`NewEvent`, matcher.ts) or as the predicate sees it
 * (`StoredEvent`): the canonical text fields and severity have the same names in both, and the
 * payload is read through the object ingest parsed, else its text parsed once.
 */
export type GuardEvent = StoredEvent | NewEvent;
export type MatchGuard =
  | { kind: 'equals'; field: string; read: (event: GuardEvent) => unknown; value: string }
  | { kind: 'contains'; field: string; read: (event: GuardEvent) => unknown; needle: string };

/** The event's payload as the predicate reads it; for a `NewEvent` (its text under `payload`), parsed once per event. */
export function guardPayload(event: GuardEvent): Record<string, unknown> {
  const carried = event[parsedPayload];
  if (carried) return carried;
  return 'payloadJson' in event ? payloadOf(event) : payloadOfText(event, event.payload);
}

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
    let read: (event: GuardEvent) => unknown;
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
      read = (e) => lookupPayload(guardPayload(e), path);
    }
    found.push(item.op === '==' ? { kind: 'equals', field: name, read, value: text } : { kind: 'contains', field: name, read, needle: foldCase(text) });
  }
  return found.sort((a, b) => rank(a) - rank(b))[0];
}

/**
 * The severities (indexes into `severities`) a monitor's events can have, when a top-level AND
 * item of its filter compares severity (`severity >= warn`, `== error`, `in (warn, error)`) and
 * rules some out; else undefined. Each level is decided by the predicate's own compiled items on
 * an event of that severity (they read nothing else), so the levels are the predicate's exactly.
 */
export function severityLevels(query: SoqlQuery): boolean[] | undefined {
  const filter = query.filter;
  const items = !filter ? [] : filter.type === 'and' ? filter.items : [filter];
  const onSeverity = items.filter(
    (item): item is Extract<Expr, { type: 'compare' | 'in' }> =>
      (item.type === 'compare' || item.type === 'in') &&
      item.field.kind === 'canonical' &&
      item.field.name === 'severity' &&
      (item.type === 'compare' ? [item.value] : item.values).every((v) => v.type === 'severity'),
  );
  if (!onSeverity.length) return undefined;
  const tests = onSeverity.map((item) => compilePredicate({ ...query, filter: item }, { now: 0 }));
  const levels = severities.map((_, level) => tests.every((t) => t({ severity: level } as StoredEvent)));
  return levels.every(Boolean) ? undefined : levels;
}

/** The guarded monitors of one field: by the value they need, and by the text they contain. */
export interface GuardedField<M> {
  read: (event: GuardEvent) => unknown;
  byValue: Map<string, M[]>;
  needles: Array<{ needle: string; monitors: M[] }>;
  /**
   * The contains guards' monitors by the field's value, while that pays: a field of few values
   * (event names, sources) is then one lookup per event instead of a case fold and a search per
   * needle. Dropped for the index's life (a tenant's is made again every 5 s) when most lookups miss.
   */
  memo: Map<string, readonly M[]> | undefined;
  lookups: number;
  misses: number;
}

/** Values remembered per field, and the lookups after which the memo's misses are judged. */
const memoValues = 1024;
const memoJudgedEvery = 4096;
const none: readonly never[] = [];

/** The monitors of the needles the value contains, needle after needle. */
function containing<M>(needles: GuardedField<M>['needles'], value: string): readonly M[] {
  const folded = foldCase(value);
  let found: M[] | undefined;
  for (let n = 0; n < needles.length; n++) if (folded.includes(needles[n]!.needle)) (found ??= []).push(...needles[n]!.monitors);
  return found ?? none;
}

function memoised<M>(field: GuardedField<M>, memo: Map<string, readonly M[]>, value: string): readonly M[] {
  let found = memo.get(value);
  if (found === undefined) {
    found = containing(field.needles, value);
    if (memo.size < memoValues) memo.set(value, found);
    field.misses++;
  }
  if (++field.lookups === memoJudgedEvery) {
    if (2 * field.misses > field.lookups) field.memo = undefined;
    field.lookups = field.misses = 0;
  }
  return found;
}

/**
 * Monitors by guard: the guarded fields (each read once per event, whatever its guards' kinds),
 * also listed as `equals` and `contains` by the kind of guard they have; by severity; and the unguarded.
 */
export interface GuardIndex<M> {
  fields: Array<GuardedField<M>>;
  equals: Array<GuardedField<M>>;
  contains: Array<GuardedField<M>>;
  /** Monitors with severity levels and no guard, by level (empty when there are none)... */
  bySeverity: M[][];
  /** ...and all of them, for an event whose severity is no level (the predicate decides). */
  severityGuarded: M[];
  unguarded: M[];
}

export function guardIndex<M extends { guard: MatchGuard | undefined; levels?: boolean[] | undefined }>(monitors: readonly M[]): GuardIndex<M> {
  const fields = new Map<string, GuardedField<M>>();
  const severityGuarded: M[] = [];
  const unguarded: M[] = [];
  for (const m of monitors) {
    const guard = m.guard;
    if (!guard) {
      if (m.levels) severityGuarded.push(m);
      else unguarded.push(m);
      continue;
    }
    let field = fields.get(guard.field);
    if (!field) fields.set(guard.field, (field = { read: guard.read, byValue: new Map(), needles: [], memo: new Map(), lookups: 0, misses: 0 }));
    if (guard.kind === 'equals') {
      const list = field.byValue.get(guard.value);
      if (list) list.push(m);
      else field.byValue.set(guard.value, [m]);
    } else {
      const same = field.needles.find((n) => n.needle === guard.needle);
      if (same) same.monitors.push(m);
      else field.needles.push({ needle: guard.needle, monitors: [m] });
    }
  }
  const all = [...fields.values()];
  const bySeverity = severityGuarded.length ? severities.map((_, level) => severityGuarded.filter((m) => m.levels![level])) : [];
  return { fields: all, equals: all.filter((f) => f.byValue.size), contains: all.filter((f) => f.needles.length), bySeverity, severityGuarded, unguarded };
}

/** Calls `visit` once for every monitor the event may match: those whose guard or severity levels it passes, and the unguarded. */
export function forEachCandidate<M, E extends GuardEvent>(index: GuardIndex<M>, event: E, visit: (monitor: M, event: E) => void): void {
  const fields = index.fields;
  for (let f = 0; f < fields.length; f++) {
    const field = fields[f]!;
    const value = field.read(event);
    if (typeof value !== 'string') continue;
    if (field.byValue.size) {
      const monitors = field.byValue.get(value);
      if (monitors) for (const m of monitors) visit(m, event);
    }
    if (!field.needles.length) continue;
    const found = field.memo ? memoised(field, field.memo, value) : containing(field.needles, value);
    for (let i = 0; i < found.length; i++) visit(found[i]!, event);
  }
  if (index.severityGuarded.length) {
    for (const m of index.bySeverity[event.severity] ?? index.severityGuarded) visit(m, event);
  }
  for (const m of index.unguarded) visit(m, event);
}
