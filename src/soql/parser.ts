/**
 * Recursive-descent parser for SOQL (grammar in SOQL.md). Recursion only happens through
 * `(` and `NOT`, both counted against the nesting limit, so the stack stays shallow whatever
 * the input; AND/OR chains and `in` lists are loops.
 */
import { AppError } from '../errors/app-error.js';
import {
  binUnits,
  compareOps,
  isCanonicalField,
  statsFunctions,
  type BinUnit,
  type StatsAggregate,
  type StatsByItem,
  type StatsClause,
  type StatsFunction,
  isTextField,
  reservedFields,
  type CompareOp,
  type Expr,
  type FieldRef,
  type SoqlQuery,
  type Value,
} from './ast.js';
import { LexError, lexNormal, lexValue, nearText, type Token } from './lexer.js';
import { isUuid, isWildcard, parseNumber, parseTime, severityLevel } from './literals.js';
import { aggregateText, byItemText } from './print.js';

export function parseError(q: string, position: number, message: string, field = ''): AppError {
  return new AppError('soql_parse_error', message, { position, near: nearText(q, position), field });
}

/** The lexer's tokens (strict), its errors as soql_parse_error. */
function lexed(q: string, lex: () => Token): Token {
  try {
    return lex();
  } catch (error) {
    if (error instanceof LexError) throw parseError(q, error.position, error.message);
    throw error;
  }
}
const normalToken = (q: string, from: number): Token => lexed(q, () => lexNormal(q, from));
const valueToken = (q: string, from: number): Token => lexed(q, () => lexValue(q, from));

export const MAX_QUERY_LENGTH = 4096;
export const MAX_NESTING = 32;
export const MAX_IN_VALUES = 100;
/** SOQL.md "Statistics": aggregates and by-items per `stats`. */
export const MAX_STATS_AGGREGATES = 10;
export const MAX_STATS_BY = 3;
/** A bin wider than this is a mistake, not a histogram (and keeps bin arithmetic exact). */
const MAX_BIN_MS = 366 * 86_400_000;
const aggregateList = 'count(), count_distinct(f), sum(f), avg(f), min(f), max(f), p50(f), p90(f), p95(f) or p99(f)';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const ORDERING: readonly CompareOp[] = ['>', '>=', '<', '<='];

/** Parses one SOQL query; throws AppError soql_parse_error / soql_reserved_field. */
export function parseSoql(q: string): SoqlQuery {
  if (q.length > MAX_QUERY_LENGTH) {
    throw parseError(q, MAX_QUERY_LENGTH, `the query is longer than ${MAX_QUERY_LENGTH.toLocaleString('en')} characters`);
  }
  const bad = LONE_SURROGATE.exec(q);
  if (bad) throw parseError(q, bad.index, 'the query contains invalid text (an unpaired UTF-16 surrogate)');
  return new Parser(q).query();
}

const isKeyword = (t: Token, word: string): boolean =>
  t.kind === 'path' && t.segments.length === 1 && !t.segments[0]!.quoted && t.segments[0]!.text.toLowerCase() === word;

/** Long tokens are cut in messages (a 4,000-character string should not come back whole). */
const clip = (text: string): string => (text.length > 40 ? `${text.slice(0, 39)}…` : text);

/** How a token reads in a message: `'AND'`, `')'`, `the end of the query`. */
const describe = (q: string, t: Token): string => (t.kind === 'eof' ? 'the end of the query' : `'${clip(q.slice(t.pos, t.end))}'`);

class Parser {
  private pos = 0;
  private depth = 0;

  constructor(private readonly q: string) {}

  query(): SoqlQuery {
    const first = this.peek();
    if (first.kind === 'eof') return { filter: null, groupBy: null };
    const filter = this.isGroupBy(first) || this.isStats(first) ? null : this.expr('');
    let groupBy: FieldRef | null = null;
    let stats: StatsClause | null = null;
    let t = this.peek();
    if (isKeyword(t, 'group')) {
      groupBy = this.groupBy(t);
      t = this.peek();
      if (isKeyword(t, 'group')) throw this.error(t.pos, "'group by' can appear only once");
      if (isKeyword(t, 'stats')) throw this.error(t.pos, "a query has either 'group by' or 'stats', not both: 'stats count() by f' does what 'group by f' does, and more");
    } else if (this.isStats(t)) {
      stats = this.stats(t);
      t = this.peek();
      if (isKeyword(t, 'group') || isKeyword(t, 'stats')) throw this.error(t.pos, `'stats' must come last, and only once: found ${describe(this.q, t)} after it`);
    }
    if (t.kind === 'eof') return stats ? { filter, groupBy, stats } : { filter, groupBy };
    if (t.kind === 'rparen') throw this.error(t.pos, "unmatched ')': there is no '(' to close");
    if (groupBy) throw this.error(t.pos, `unexpected ${describe(this.q, t)} after the 'group by' field: 'group by' must come last`);
    if (stats) throw this.error(t.pos, `expected ',', 'by' or the end of the query after the stats, found ${describe(this.q, t)}`);
    throw this.error(t.pos, `expected AND, OR, 'group by', 'stats' or the end of the query, found ${describe(this.q, t)}`);
  }

  private peek(): Token {
    return normalToken(this.q, this.pos);
  }

  private take(t: Token): void {
    this.pos = t.end;
  }

  private error(position: number, message: string, field = ''): AppError {
    return parseError(this.q, position, message, field);
  }

  private isGroupBy(t: Token): boolean {
    return isKeyword(t, 'group') && isKeyword(normalToken(this.q, t.end), 'by');
  }

  private groupBy(groupTok: Token): FieldRef {
    this.take(groupTok);
    const by = this.peek();
    if (!isKeyword(by, 'by')) throw this.error(by.pos, `expected 'by' after 'group', found ${describe(this.q, by)}`);
    this.take(by);
    const f = this.peek();
    if (f.kind !== 'path') throw this.error(f.pos, `expected a field after 'group by', found ${describe(this.q, f)}`);
    const field = this.field(f);
    this.take(f);
    return field;
  }

  /**
   * `stats` starts the statistics clause when an aggregate's name and '(' follow it; otherwise
   * it is a payload key like any other (`stats > 3`).
   */
  private isStats(t: Token): boolean {
    if (!isKeyword(t, 'stats')) return false;
    const fn = normalToken(this.q, t.end);
    if (fn.kind !== 'path' || fn.segments.length !== 1 || fn.segments[0]!.quoted) return false;
    return normalToken(this.q, fn.end).kind === 'lparen';
  }

  private stats(statsTok: Token): StatsClause {
    this.take(statsTok);
    const aggregates: StatsAggregate[] = [];
    const seen = new Map<string, number>();
    const unique = (text: string, position: number) => {
      if (seen.has(text)) throw this.error(position, `${text} appears twice in the stats: each aggregate and by-item once`);
      seen.set(text, position);
    };
    for (let after = "'stats'"; ; after = "','") {
      const t = this.peek();
      if (aggregates.length === MAX_STATS_AGGREGATES) throw this.error(t.pos, `stats takes at most ${MAX_STATS_AGGREGATES} aggregates`);
      const aggregate = this.aggregate(after);
      unique(aggregateText(aggregate), aggregate.position);
      aggregates.push(aggregate);
      const sep = this.peek();
      if (sep.kind !== 'comma') break;
      this.take(sep);
    }
    const by: StatsByItem[] = [];
    const byTok = this.peek();
    if (isKeyword(byTok, 'by')) {
      this.take(byTok);
      for (let after = "'by'"; ; after = "','") {
        const t = this.peek();
        if (by.length === MAX_STATS_BY) throw this.error(t.pos, `stats takes at most ${MAX_STATS_BY} by-items`);
        const item = this.byItem(after);
        if (item.kind === 'bin' && by.some((b) => b.kind === 'bin')) throw this.error(item.position, 'stats takes one bin(…) at most');
        unique(byItemText(item), item.position);
        by.push(item);
        const sep = this.peek();
        if (sep.kind !== 'comma') break;
        this.take(sep);
      }
    }
    return { aggregates, by, position: statsTok.pos };
  }

  private aggregate(after: string): StatsAggregate {
    const t = this.peek();
    const name = t.kind === 'path' && t.segments.length === 1 && !t.segments[0]!.quoted ? t.segments[0]!.text.toLowerCase() : '';
    if (!name) throw this.error(t.kind === 'eof' ? this.q.length : t.pos, `expected an aggregate after ${after}: ${aggregateList}; found ${describe(this.q, t)}`);
    const fn = statsFunctions.find((f) => f === name);
    if (!fn) throw this.error(t.pos, `unknown aggregate '${clip(name)}': use ${aggregateList}`);
    this.take(t);
    const open = this.peek();
    if (open.kind !== 'lparen') throw this.error(open.kind === 'eof' ? this.q.length : open.pos, `expected '(' after '${fn}', found ${describe(this.q, open)}`);
    this.take(open);
    let aggregate: StatsAggregate;
    if (fn === 'count') {
      aggregate = { fn, position: t.pos };
    } else {
      const f = this.peek();
      if (f.kind !== 'path') throw this.error(f.kind === 'eof' ? this.q.length : f.pos, `expected a field in ${fn}(…), found ${describe(this.q, f)}`);
      const field = this.field(f);
      if (fn !== 'count_distinct' && field.kind === 'canonical' && field.name !== 'bytes_raw') {
        throw this.error(f.pos, `${fn} reads numbers: use bytes_raw or a payload key (payload.ping); ${field.name} is not a number field`, field.name);
      }
      this.take(f);
      aggregate = fn === 'count_distinct' ? { fn, field, position: t.pos } : { fn: fn as Exclude<StatsFunction, 'count' | 'count_distinct'>, field, position: t.pos };
    }
    const close = this.peek();
    if (close.kind !== 'rparen') {
      // `count(` at the end is an unfinished call, not a field given to count.
      const what =
        fn === 'count' && close.kind !== 'eof'
          ? "count() takes no field: write count(), or count_distinct(f) for distinct values"
          : `expected ')' to close ${fn}(…), found ${describe(this.q, close)}`;
      throw this.error(close.kind === 'eof' ? this.q.length : close.pos, what);
    }
    this.take(close);
    return aggregate;
  }

  private byItem(after: string): StatsByItem {
    const t = this.peek();
    if (t.kind !== 'path') throw this.error(t.kind === 'eof' ? this.q.length : t.pos, `expected a field or bin(…) after ${after}, found ${describe(this.q, t)}`);
    const open = normalToken(this.q, t.end);
    if (isKeyword(t, 'bin') && open.kind === 'lparen') {
      this.take(t);
      this.take(open);
      const d = this.peek();
      const m = d.kind === 'path' && d.segments.length === 1 && !d.segments[0]!.quoted ? /^(\d{1,12})([smhd])$/i.exec(d.segments[0]!.text) : null;
      const amount = m ? Number(m[1]) : 0;
      const unit = m ? (m[2]!.toLowerCase() as BinUnit) : 's';
      if (!m || amount < 1 || amount * binUnits[unit] > MAX_BIN_MS) {
        throw this.error(d.kind === 'eof' ? this.q.length : d.pos, `expected a bin width like 30s, 5m, 1h or 1d (at most 366d) in bin(…), found ${describe(this.q, d)}`);
      }
      this.take(d);
      const close = this.peek();
      if (close.kind !== 'rparen') throw this.error(close.kind === 'eof' ? this.q.length : close.pos, `expected ')' to close bin(…), found ${describe(this.q, close)}`);
      this.take(close);
      return { kind: 'bin', amount, unit, position: t.pos };
    }
    const field = this.field(t);
    this.take(t);
    return { kind: 'field', field, position: t.pos };
  }

  private expr(after: string): Expr {
    const items = [this.andExpr(after)];
    for (let t = this.peek(); isKeyword(t, 'or'); t = this.peek()) {
      this.take(t);
      items.push(this.andExpr('OR'));
    }
    return items.length === 1 ? items[0]! : { type: 'or', items, position: items[0]!.position };
  }

  private andExpr(after: string): Expr {
    const items = [this.unary(after)];
    for (let t = this.peek(); isKeyword(t, 'and'); t = this.peek()) {
      this.take(t);
      items.push(this.unary('AND'));
    }
    return items.length === 1 ? items[0]! : { type: 'and', items, position: items[0]!.position };
  }

  private enter(position: number): void {
    if (++this.depth > MAX_NESTING) {
      throw this.error(position, `the query is nested more than ${MAX_NESTING} levels deep (parentheses and NOT)`);
    }
  }

  private unary(after: string): Expr {
    const t = this.peek();
    const expected = after ? `expected a condition after '${after}'` : 'expected a condition';
    if (isKeyword(t, 'not')) {
      this.enter(t.pos);
      this.take(t);
      const expr = this.unary('NOT');
      this.depth--;
      return { type: 'not', expr, position: t.pos };
    }
    if (t.kind === 'lparen') {
      this.enter(t.pos);
      this.take(t);
      const inner = this.expr('(');
      const close = this.peek();
      if (close.kind === 'eof') throw this.error(t.pos, "unclosed parenthesis starting here: add a ')'");
      if (close.kind !== 'rparen') throw this.error(close.pos, `expected AND, OR or ')', found ${describe(this.q, close)}`);
      this.take(close);
      this.depth--;
      return inner;
    }
    if (t.kind === 'string') {
      this.take(t);
      const next = this.peek();
      if (next.kind === 'op' || isKeyword(next, 'in') || isKeyword(next, 'exists')) {
        throw this.error(t.pos, 'a quoted text is searched for in the message and cannot be compared: write a field name bare or in `backquotes`');
      }
      return { type: 'freetext', text: t.text, position: t.pos };
    }
    if (t.kind === 'path' && !['and', 'or'].some((k) => isKeyword(t, k)) && !this.isGroupBy(t) && !this.isStats(t)) return this.predicate(t);
    const found = this.isGroupBy(t) ? "'group by'" : this.isStats(t) ? "'stats'" : describe(this.q, t);
    throw this.error(t.kind === 'eof' ? this.q.length : t.pos, `${expected}, found ${found}`);
  }

  private predicate(path: Token & { kind: 'path' }): Expr {
    const field = this.field(path);
    // Errors name a payload key as written (`ping`, `payload.ping`), a canonical field by its name.
    const label = field.kind === 'canonical' ? field.name : this.q.slice(path.pos, path.end);
    this.take(path);
    const t = this.peek();
    const position = path.pos;
    if (t.kind === 'op') {
      const op = compareOps.find((o) => o === t.text);
      if (!op) throw this.error(t.pos, `unknown operator '${clip(t.text)}': use :, !:, ==, !=, >, >=, < or <=`, label);
      if (ORDERING.includes(op) && field.kind === 'canonical' && field.name === 'event_id') {
        throw this.error(t.pos, `event_id cannot be compared with '${op}': use :, ==, != or !:`, label);
      }
      this.take(t);
      return { type: 'compare', field, op, value: this.value(field, label, op, `'${op}'`), position };
    }
    if (isKeyword(t, 'exists')) {
      this.take(t);
      return { type: 'exists', field, position };
    }
    if (isKeyword(t, 'in')) {
      this.take(t);
      return { type: 'in', field, values: this.inList(field, label), position };
    }
    const where = t.kind === 'eof' ? this.q.length : t.pos;
    throw this.error(where, `expected an operator (:, ==, >= …), 'in' or 'exists' after '${clip(label)}', found ${describe(this.q, t)}`, label);
  }

  private inList(field: FieldRef, label: string): Value[] {
    const open = this.peek();
    if (open.kind !== 'lparen') throw this.error(open.pos, `expected '(' after 'in', found ${describe(this.q, open)}`, label);
    this.take(open);
    const values: Value[] = [];
    for (let after = "'('"; ; ) {
      const start = valueToken(this.q, this.pos);
      if (values.length === MAX_IN_VALUES && start.kind !== 'eof') {
        throw this.error(start.pos, `an 'in' list can hold at most ${MAX_IN_VALUES} values`, label);
      }
      values.push(this.value(field, label, '==', after));
      const sep = valueToken(this.q, this.pos);
      if (sep.kind === 'rparen') {
        this.take(sep);
        return values;
      }
      if (sep.kind === 'eof') throw this.error(open.pos, "unclosed 'in' list starting here: add a ')'", label);
      if (sep.kind !== 'comma') throw this.error(sep.pos, `expected ',' or ')' in the 'in' list, found ${describe(this.q, sep)}`, label);
      this.take(sep);
      after = "','";
    }
  }

  /** Resolves a path to a field: reserved names first, then canonical names, else payload keys. */
  private field(t: Token & { kind: 'path' }): FieldRef {
    const [head, ...rest] = t.segments;
    const name = head!.text.toLowerCase();
    if ((reservedFields as readonly string[]).includes(name)) {
      throw new AppError('soql_reserved_field', `${name} is taken from your API token and cannot appear in a query`, {
        position: t.pos,
        near: nearText(this.q, t.pos),
        field: name,
      });
    }
    if (name === 'payload' && rest.length > 0) return { kind: 'payload', path: rest.map((s) => s.text) };
    if (isCanonicalField(name)) {
      if (rest.length > 0) {
        throw this.error(t.pos, `${name} has no keys inside it; for a payload key write payload.${name}.…`, name);
      }
      return { kind: 'canonical', name };
    }
    return { kind: 'payload', path: t.segments.map((s) => s.text) };
  }

  /** Reads the value after an operator and checks it against the field's type. */
  private value(field: FieldRef, label: string, op: CompareOp, after: string): Value {
    const t = valueToken(this.q, this.pos);
    if (t.kind !== 'bare' && t.kind !== 'string') {
      throw this.error(t.kind === 'eof' ? this.q.length : t.pos, `expected a value after ${after}, found ${describe(this.q, t)}`, label);
    }
    this.take(t);
    const text = t.text;
    const quoted = t.kind === 'string';
    const shown = quoted ? `"${clip(text)}"` : `'${clip(text)}'`;
    if (field.kind === 'payload' || isTextField(field.name)) return { type: 'text', text, quoted };
    switch (field.name) {
      case 'dataset':
        if ((op === ':' || op === '!:') && isWildcard(text, quoted)) {
          throw this.error(t.pos, 'wildcards are not supported on dataset: name the dataset, or list several with in (…)', label);
        }
        return { type: 'text', text, quoted };
      case 'severity': {
        const level = severityLevel(text);
        if (level < 0) throw this.error(t.pos, `unknown severity ${shown}: use debug, info, warn, error or fatal`, label);
        return { type: 'severity', level };
      }
      case 'bytes_raw': {
        const value = parseNumber(text);
        if (value === null) throw this.error(t.pos, `expected a number for bytes_raw, found ${shown}`, label);
        return { type: 'number', value, text };
      }
      case 'event_id':
        if (!isUuid(text)) throw this.error(t.pos, `expected a UUID for event_id, found ${shown}`, label);
        return { type: 'uuid', uuid: text.toLowerCase() };
      default: {
        const parsed = parseTime(text);
        if (parsed.ok) return { type: 'time', time: parsed.time };
        const why = parsed.reason === 'range' ? 'is out of range (years 0000 to 9999)' : 'is not a time';
        throw this.error(
          t.pos,
          `${shown} ${why}: ${label} takes an ISO 8601 date-time (2024-05-01T10:00:00Z), now, now-15m or -1h`,
          label,
        );
      }
    }
  }
}

