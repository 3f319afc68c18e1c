/**
 * The in-memory evaluator used by live tail. It must select exactly what the DuckDB back end
 * (duckdb-soql.ts) selects; duckdb/soql-agreement.test.ts checks the two against each other on random queries.
 * Rules shared by both (SOQL.md "Meaning"):
 * - a missing field (absent actor/source, absent payload key) fails every comparison,
 *   `!=` and `!:` included; NOT is plain negation, so `NOT actor:bot` does match it;
 * - `!=` / `!:` on a present value are the negation of `==` / `:`;
 * - payload values: strings compare as text; numbers numerically, and only against a bare
 *   number; booleans and null only equal a bare `true`/`false`/`null`; objects and arrays
 *   equal nothing;
 * - `f in (a, b)` is `f == a OR f == b`;
 * - a payload whose JSON text DuckDB cannot read (an escaped unpaired surrogate) is empty.
 */
import { parsedPayload, type StoredEvent } from '../shared/event-record.js';
import type { CompareOp, Expr, FieldRef, SoqlQuery, Value } from './ast.js';
import { isTextField } from './ast.js';
import { isWildcard, payloadReadings, resolveTime, type PayloadReadings } from './literals.js';
import { compareCodePoints, foldCase, wildcardMatcher } from './text.js';
import { duckDbCannotRead } from './payload-text.js';

export interface PredicateContext {
  /** epoch milliseconds that `now` and relative times resolve against */
  now: number;
}

/** An event with its payload parsed (tests write their events this way). */
export type MemoryEvent = Omit<StoredEvent, 'payloadJson'> & { payload: Record<string, unknown> };

export type EventPredicate = (e: StoredEvent | MemoryEvent) => boolean;

// A payload DuckDB cannot read reads as empty everywhere (the engine's rule, payload-text.ts).
export { duckDbCannotRead };

/** A stored event's payload is parsed on first use, once, whatever the number of sessions (or match monitors: matcher.ts reads it too). */
const parsedPayloads = new WeakMap<object, Record<string, unknown>>();
export function payloadOf(ev: StoredEvent | MemoryEvent): Record<string, unknown> {
  const carried = ev[parsedPayload];
  if (carried) return carried;
  if ('payload' in ev) {
    let payload = parsedPayloads.get(ev.payload);
    if (!payload) {
      payload = duckDbCannotRead(JSON.stringify(ev.payload)) ? {} : ev.payload;
      parsedPayloads.set(ev.payload, payload);
    }
    return payload;
  }
  return payloadOfText(ev, ev.payloadJson);
}

/**
 * The payload JSON text `text` of the event `key` as the predicate reads it (an unreadable text
 * is empty), parsed once per key: match monitors' guards read a key of an ingested event before
 * its predicate's view of it exists, and hand the object on (matcher.ts).
 */
export function payloadOfText(key: object, text: string): Record<string, unknown> {
  let payload = parsedPayloads.get(key);
  if (!payload) {
    payload = duckDbCannotRead(text) ? {} : (JSON.parse(text) as Record<string, unknown>);
    parsedPayloads.set(key, payload);
  }
  return payload;
}

/** What `payloadOfText` parsed for `key`, if it did: nothing is parsed here. */
export const payloadParsedFor = (key: object): Record<string, unknown> | undefined => parsedPayloads.get(key);

/**
 * Compiles the query's filter (its `group by`, if any, is ignored: live tail rejects such
 * queries first, see `rejectAggregationForTail`). Relative times are fixed at compile time.
 */
export function compilePredicate(query: SoqlQuery, ctx: PredicateContext): EventPredicate {
  return query.filter ? compile(query.filter, ctx.now) : () => true;
}

function compile(e: Expr, now: number): EventPredicate {
  switch (e.type) {
    case 'and': {
      // Cheapest first (a pure conjunction's answer does not depend on the order): a payload
      // key read parses the event's payload, which an earlier false canonical test spares.
      const parts = [...e.items].sort((a, b) => cost(a) - cost(b)).map((i) => compile(i, now));
      // Loops rather than every/some: a closure less per event and term (match monitors run these per event).
      return (ev) => {
        for (let i = 0; i < parts.length; i++) if (!parts[i]!(ev)) return false;
        return true;
      };
    }
    case 'or': {
      const parts = [...e.items].sort((a, b) => cost(a) - cost(b)).map((i) => compile(i, now));
      return (ev) => {
        for (let i = 0; i < parts.length; i++) if (parts[i]!(ev)) return true;
        return false;
      };
    }
    case 'not': {
      const inner = compile(e.expr, now);
      return (ev) => !inner(ev);
    }
    case 'freetext': {
      const needle = foldCase(e.text);
      return (ev) => foldCase(ev.message).includes(needle);
    }
    case 'exists':
      return existsTest(e.field);
    case 'compare':
      return compareTest(e.field, e.op, e.value, now);
    case 'in': {
      const parts = e.values.map((v) => compareTest(e.field, '==', v, now));
      return (ev) => parts.some((p) => p(ev));
    }
  }
}

/** A rough order of a test's cost per event: number and time compares, text, the message's free text, then payload keys. */
function cost(e: Expr): number {
  switch (e.type) {
    case 'and':
    case 'or':
      return Math.max(...e.items.map(cost));
    case 'not':
      return cost(e.expr);
    case 'freetext':
      return 2;
    case 'exists':
    case 'compare':
    case 'in':
      return e.field.kind === 'payload' ? 3 : e.type !== 'exists' && isTextField(e.field.name) ? 1 : 0;
  }
}

const MISSING = Symbol('missing');

/**
 * Follows a payload path the way DuckDB's JSON pointer does: object keys by own property, and
 * array elements by a canonical decimal index (`0`, `12`, not `01` or `-1`).
 */
export function lookupPayload(root: unknown, path: readonly string[]): unknown {
  let cur: unknown = root;
  for (const key of path) {
    if (Array.isArray(cur)) {
      if (!/^(?:0|[1-9]\d{0,8})$/.test(key) || Number(key) >= cur.length) return MISSING;
      cur = cur[Number(key)];
    } else if (cur !== null && typeof cur === 'object' && Object.hasOwn(cur, key)) {
      cur = (cur as Record<string, unknown>)[key];
    } else {
      return MISSING;
    }
  }
  return cur === undefined ? MISSING : cur;
}

function existsTest(field: FieldRef): EventPredicate {
  if (field.kind === 'payload') return (ev) => lookupPayload(payloadOf(ev), field.path) !== MISSING;
  if (field.name === 'actor' || field.name === 'source') {
    const name = field.name;
    return (ev) => ev[name] !== null && ev[name] !== undefined;
  }
  return () => true; // every other canonical field is always present
}

/** Applies an operator to the sign of a comparison (equality operators included). */
function bySign(op: CompareOp, sign: number): boolean {
  switch (op) {
    case ':':
    case '==':
      return sign === 0;
    case '!:':
    case '!=':
      return sign !== 0;
    case '>':
      return sign > 0;
    case '>=':
      return sign >= 0;
    case '<':
      return sign < 0;
    case '<=':
      return sign <= 0;
  }
}

const numSign = (a: number, b: number): number => (a < b ? -1 : a > b ? 1 : 0);

/** `:` on text: contains, or a whole-field wildcard for a bare value with `*`; case-insensitive. */
function textMatcher(text: string, quoted: boolean): (s: string) => boolean {
  const folded = foldCase(text);
  if (!isWildcard(text, quoted)) return (s) => foldCase(s).includes(folded);
  const matches = wildcardMatcher(folded);
  return (s) => matches(foldCase(s));
}

function compareTest(field: FieldRef, op: CompareOp, value: Value, now: number): EventPredicate {
  if (field.kind === 'payload') return payloadTest(field.path, op, value);
  const name = field.name;
  if (isTextField(name) && value.type === 'text') {
    const matches = textMatcher(value.text, value.quoted);
    const q = value.text;
    return (ev) => {
      const s = ev[name];
      if (s === null || s === undefined) return false;
      if (op === ':') return matches(s);
      if (op === '!:') return !matches(s);
      return bySign(op, op === '==' || op === '!=' ? (s === q ? 0 : 1) : compareCodePoints(s, q));
    };
  }
  switch (value.type) {
    case 'text': {
      // dataset: `:` is equality ignoring case (names are lower case anyway), `==` exact.
      const q = value.text;
      const lower = q.toLowerCase();
      if (op === ':' || op === '!:') return (ev) => (ev.dataset.toLowerCase() === lower) === (op === ':');
      if (op === '==' || op === '!=') return (ev) => (ev.dataset === q) === (op === '==');
      return (ev) => bySign(op, compareCodePoints(ev.dataset, q));
    }
    case 'uuid':
      return (ev) => bySign(op, ev.event_id.toLowerCase() === value.uuid ? 0 : 1);
    case 'severity':
      return (ev) => bySign(op, numSign(ev.severity, value.level));
    case 'number':
      return (ev) => bySign(op, numSign(ev.bytes_raw, value.value));
    case 'time': {
      const at = resolveTime(value.time, now);
      const key = name === 'ingested_at' ? 'ingested_at' : 'ts';
      return (ev) => bySign(op, numSign(ev[key], at));
    }
  }
}

function payloadTest(path: readonly string[], op: CompareOp, value: Value): EventPredicate {
  if (value.type !== 'text') return () => false; // the parser only gives payload keys text values
  const r = payloadReadings(value.text, value.quoted);
  const matches = textMatcher(value.text, value.quoted);
  const test = (v: unknown): boolean => {
    if (op === '!=' || op === '!:') return !payloadPositive(op === '!=' ? '==' : ':', v, r, matches);
    return payloadPositive(op, v, r, matches);
  };
  return (ev) => {
    const v = lookupPayload(payloadOf(ev), path);
    return v !== MISSING && test(v);
  };
}

function payloadPositive(op: CompareOp, v: unknown, r: PayloadReadings, matches: (s: string) => boolean): boolean {
  if (typeof v === 'string') {
    if (op === ':') return matches(v);
    if (op === '==') return v === r.text;
    return bySign(op, compareCodePoints(v, r.text));
  }
  if (typeof v === 'number') return r.number !== null && bySign(op, numSign(v, r.number));
  const equality = op === ':' || op === '==';
  if (typeof v === 'boolean') return equality && r.boolean === v;
  if (v === null) return equality && r.isNull;
  return false;
}
