// SOQL as text, for the explorer (SOQL.md): where a query's `group by` / `stats` clause starts,
// the query actually sent with the time range's `ts` bounds (and how an error's position in it
// maps back to what the reader typed), `field:value` clauses for click-to-filter with the right
// quoting, and the histogram's bin width. No DOM, and from the server only SOQL's own
// dependency-free modules (its lexer, its field and function names): the Node tests check these
// functions against the server's own parser (src/dashboard/explorer-soql.test.ts).
import { lexNormal, lexValue } from '../../../../src/soql/lexer.js';
import { canonicalFields, statsFunctions } from '../../../../src/soql/ast.js';
import { severities, type Severity } from '../../../../src/shared/event-record.js';

export { canonicalFields, severities, statsFunctions, type Severity };

interface Tok {
  kind: 'word' | 'path' | 'string' | 'op' | 'lparen' | 'rparen' | 'comma' | 'value' | 'other';
  /** lower-cased text of a one-segment, unquoted path (a possible keyword), else '' */
  word: string;
  pos: number;
  end: number;
  depth: number;
}

/**
 * The tokens of q as the server's lexer reads them (src/soql/lexer.ts, lenient: never throws,
 * unclosed strings and backquotes run to the end): after an operator, and inside `in (…)`, a
 * value is one word up to a space or `()",`; elsewhere a word is a field path.
 */
function tokens(q: string): Tok[] {
  const out: Tok[] = [];
  let pos = 0;
  let depth = 0;
  let expectValue = false;
  let listDepth = -1; // depth of an open `in (` list, -1 when none
  let pendingList = false;
  for (;;) {
    const t = expectValue || listDepth >= 0 ? lexValue(q, pos, true) : lexNormal(q, pos, true);
    if (t.kind === 'eof') return out;
    pos = t.end;
    const push = (kind: Tok['kind'], word = '') => out.push({ kind, word, pos: t.pos, end: t.end, depth });
    switch (t.kind) {
      case 'string':
        push('string');
        expectValue = false;
        pendingList = false;
        break;
      case 'lparen':
        push('lparen');
        depth++;
        if (pendingList) listDepth = depth;
        pendingList = false;
        expectValue = false;
        break;
      case 'rparen':
        if (listDepth === depth) listDepth = -1;
        depth = Math.max(0, depth - 1);
        push('rparen');
        expectValue = false;
        break;
      case 'comma':
        push('comma');
        break;
      case 'bare':
        push('value');
        expectValue = false;
        break;
      case 'op':
        push('op');
        expectValue = true;
        pendingList = false;
        break;
      case 'path': {
        const word = t.segments.length === 1 && !t.segments[0]!.quoted ? q.slice(t.pos, t.end).toLowerCase() : '';
        push(word ? 'word' : 'path', word);
        // `f in (…)`: the list's items are values.
        pendingList = word === 'in' && out.length > 1 && (out[out.length - 2]!.kind === 'word' || out[out.length - 2]!.kind === 'path');
        break;
      }
      case 'other':
        push('other');
        break;
    }
  }
}

/** Where `group by` / `stats agg(` starts at the top level of q (outside values and strings), or -1. */
function clauseStart(toks: Tok[]): number {
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.kind !== 'word') continue;
    const next = toks[i + 1];
    if (t.word === 'group' && next?.word === 'by') return t.pos;
    if (t.word === 'stats' && next?.kind === 'word' && toks[i + 2]?.kind === 'lparen') return t.pos;
  }
  return -1;
}

export interface SplitQuery {
  /** The filter expression, trimmed ('' for none). */
  filter: string;
  filterStart: number;
  /** `group by f` or `stats …` as written, trimmed ('' for none). */
  clause: string;
  clauseStart: number;
}

/** Splits q into its filter and its trailing `group by` / `stats` clause. */
export function splitQuery(q: string): SplitQuery {
  const at = clauseStart(tokens(q));
  const head = at < 0 ? q : q.slice(0, at);
  const lead = head.length - head.trimStart().length;
  return {
    filter: head.trim(),
    filterStart: lead,
    clause: at < 0 ? '' : q.slice(at).trim(),
    clauseStart: at < 0 ? q.length : at,
  };
}

/** The kind of answer a query gives: events, `{field, groups}` or `{stats}`. */
export function queryKind(q: string): 'events' | 'groups' | 'stats' {
  const { clause } = splitQuery(q);
  if (!clause) return 'events';
  return /^group\b/i.test(clause) ? 'groups' : 'stats';
}

/** True when the filter has an OR outside parentheses (so `AND x` must wrap it first). */
function hasTopLevelOr(filter: string): boolean {
  return tokens(filter).some((t) => t.kind === 'word' && t.word === 'or' && t.depth === 0);
}

/**
 * Where q's parentheses do not balance: its first `)` without a `(`, else its first `(` never
 * closed, else -1 (inside strings and values they do not count, as for the server).
 */
function unbalancedParen(q: string): number {
  const open: number[] = [];
  for (const t of tokens(q)) {
    if (t.kind === 'lparen') open.push(t.pos);
    else if (t.kind === 'rparen' && open.pop() === undefined) return t.pos;
  }
  return open[0] ?? -1;
}

/** The query sent to the API: the reader's text inside the time range's bounds, and the way back. */
export interface SentQuery {
  q: string;
  /** A position in `q` (an error's `position`) → the position in the reader's text. */
  toUser(position: number): number;
}

/**
 * `bounds AND (filter) clause`: the reader's filter wrapped in parentheses (so an OR in it
 * stays inside), the `group by` / `stats` clause kept last. Without bounds, q as written.
 */
export function withBounds(userQ: string, bounds: string): SentQuery {
  if (!bounds) return { q: userQ, toUser: (p) => p };
  const split = splitQuery(userQ);
  let q = bounds;
  let filterAt = -1;
  if (split.filter) {
    q += ' AND (';
    filterAt = q.length;
    q += `${split.filter})`;
  }
  let clauseAt = -1;
  if (split.clause) {
    q += ' ';
    clauseAt = q.length;
    q += split.clause;
  }
  const filterEnd = filterAt + split.filter.length; // our closing parenthesis
  const toUser = (p: number): number => {
    if (clauseAt >= 0 && p >= clauseAt) return Math.min(userQ.length, split.clauseStart + (p - clauseAt));
    if (filterAt >= 0 && p >= filterAt && p < filterEnd) return split.filterStart + (p - filterAt);
    // At our own parentheses: the reader's filter does not balance (it closed ours, or left one open).
    const paren = filterAt >= 0 ? unbalancedParen(split.filter) : -1;
    if (paren >= 0) return split.filterStart + paren;
    if (filterAt >= 0 && p >= filterAt) return split.filterStart + split.filter.length;
    return p >= q.length ? userQ.length : 0;
  };
  return { q, toUser };
}

/** Adds `clause` to q's filter with AND, keeping its `group by` / `stats` clause last. */
export function addFilter(userQ: string, clause: string): string {
  const split = splitQuery(userQ);
  const filter = !split.filter ? clause : hasTopLevelOr(split.filter) ? `(${split.filter}) AND ${clause}` : `${split.filter} AND ${clause}`;
  return split.clause ? `${filter} ${split.clause}` : filter;
}

/** The filter part only (the histogram counts it whatever the clause). */
export function filterOf(userQ: string): string {
  return splitQuery(userQ).filter;
}

// ---- click-to-filter ----------------------------------------------------------------------

const BARE_KEY = /^[A-Za-z0-9_@$-]+$/;
/** A value that reads the same bare: no spaces, quotes, parentheses, commas or `*` (a wildcard). */
const BARE_VALUE = /^[A-Za-z0-9_.@$/+-]+$/;
const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** Values longer than this are cut: `:` is "contains", so a prefix still matches the event. */
const MAX_VALUE_CHARS = 200;

/** A key as SOQL writes it: bare, or in backquotes with `` ` `` doubled. Undefined for "" (not expressible). */
export function quoteKey(key: string): string | undefined {
  if (key === '') return undefined;
  return BARE_KEY.test(key) ? key : `\`${key.replaceAll('`', '``')}\``;
}

/** A field path as SOQL writes it: a canonical name, or `payload.` and the keys. */
export function fieldText(path: readonly string[]): string | undefined {
  const [head, ...rest] = path;
  if (head === undefined) return undefined;
  if (rest.length === 0 && (canonicalFields as readonly string[]).includes(head)) return head;
  if (head !== 'payload' || rest.length === 0) return undefined;
  const keys = rest.map(quoteKey);
  return keys.every((k) => k !== undefined) ? `payload.${keys.join('.')}` : undefined;
}

/** `"…"` with `\"` and `\\` escaped (SOQL.md `string`). */
export function quoteString(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function clipText(text: string): string {
  if (text.length <= MAX_VALUE_CHARS) return text;
  let cut = text.slice(0, MAX_VALUE_CHARS);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut;
}

/**
 * The clause that keeps events whose `path` holds `value` (click-to-filter), or undefined when
 * SOQL cannot say it (an object, an empty key, org_id). Strings use `:` (SOQL.md: contains,
 * case-insensitive; equality on severity, dataset, times), quoted unless the text is a plain word
 * that cannot read as a number, boolean or null; numbers, booleans and null are bare so they
 * compare as what they are; an empty string uses `== ""`.
 */
export function filterClause(path: readonly string[], value: unknown): string | undefined {
  const field = fieldText(path);
  return field === undefined ? undefined : valueClause(field, value);
}

/** filterClause for a field already written as SOQL (`source`, `payload.map`, as the API names a group by field). */
export function valueClause(field: string, value: unknown): string | undefined {
  if (value === null) return `${field}:null`;
  if (typeof value === 'boolean') return `${field}:${value}`;
  if (typeof value === 'number') return Number.isFinite(value) ? `${field}:${String(value)}` : undefined;
  if (typeof value !== 'string') return undefined;
  if (value === '') return `${field} == ""`;
  if (field === 'ts' || field === 'ingested_at') return `${field}:${value}`;
  const text = clipText(value);
  const plain = BARE_VALUE.test(text) && !NUMBER.test(text) && !['true', 'false', 'null'].includes(text.toLowerCase());
  return `${field}:${plain ? text : quoteString(text)}`;
}

// ---- time ranges --------------------------------------------------------------------------

export type RelativeRange = '15m' | '1h' | '24h' | '7d';
export const relativeRanges: Record<RelativeRange, { label: string; ms: number }> = {
  '15m': { label: 'Last 15 minutes', ms: 15 * 60_000 },
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
};
export type TimeRange = { kind: 'relative'; range: RelativeRange } | { kind: 'custom'; from: number; to: number };

/**
 * The `ts` bounds of a range: `ts >= now-1h` for the relative ones (the server's clock decides
 * "now", and the same text pages with its cursor), `ts >= <ISO> AND ts < <ISO>` for a custom one.
 */
export function boundsText(range: TimeRange): string {
  if (range.kind === 'relative') return `ts >= now-${range.range}`;
  return `ts >= ${new Date(range.from).toISOString()} AND ts < ${new Date(range.to).toISOString()}`;
}

/** The range's interval in epoch ms, with `now` for the relative ones. */
export function interval(range: TimeRange, now: number): { from: number; to: number } {
  return range.kind === 'relative' ? { from: now - relativeRanges[range.range].ms, to: now } : { from: range.from, to: range.to };
}

const units = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const widths = ['1s', '2s', '5s', '10s', '15s', '30s', '1m', '2m', '5m', '10m', '15m', '30m', '1h', '2h', '3h', '6h', '12h', '1d', '2d', '7d', '14d', '30d', '90d', '366d'];

export const durationMs = (text: string): number => Number(text.slice(0, -1)) * units[text.slice(-1) as keyof typeof units];

/** The narrowest round bin width giving at most `maxBins` bins over `spanMs` (the histogram's). */
export function binWidth(spanMs: number, maxBins = 120): string {
  return widths.find((w) => spanMs / durationMs(w) <= maxBins) ?? '366d';
}

/** URL query parameters of a range: `range=1h`, or `range=custom&from=…&to=…` (ISO). */
export function rangeParams(range: TimeRange): Record<string, string> {
  if (range.kind === 'relative') return { range: range.range };
  return { range: 'custom', from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() };
}

export function rangeFromParams(params: URLSearchParams): TimeRange {
  const range = params.get('range') ?? '1h';
  if (range in relativeRanges) return { kind: 'relative', range: range as RelativeRange };
  const from = Date.parse(params.get('from') ?? '');
  const to = Date.parse(params.get('to') ?? '');
  if (range === 'custom' && Number.isFinite(from) && Number.isFinite(to) && from < to) return { kind: 'custom', from, to };
  return { kind: 'relative', range: '1h' };
}
