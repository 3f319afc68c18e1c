/**
 * Recursive-descent parser for SOQL (grammar in SOQL.md). Recursion only happens through
 * `(` and `NOT`, both counted against the nesting limit, so the stack stays shallow whatever
 * the input; AND/OR chains and `in` lists are loops.
 */
import { AppError } from '../../errors/app-error.js';
import {
  compareOps,
  isCanonicalField,
  isTextField,
  reservedFields,
  type CompareOp,
  type Expr,
  type FieldRef,
  type SoqlQuery,
  type Value,
} from './ast.js';
import { lexNormal, lexValue, nearText, parseError, type Token } from './lexer.js';
import { isUuid, isWildcard, parseNumber, parseTime, severityLevel } from './literals.js';

export const MAX_QUERY_LENGTH = 4096;
export const MAX_NESTING = 32;
export const MAX_IN_VALUES = 100;

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
    const filter = this.isGroupBy(first) ? null : this.expr('');
    let groupBy: FieldRef | null = null;
    let t = this.peek();
    if (isKeyword(t, 'group')) {
      groupBy = this.groupBy(t);
      t = this.peek();
      if (isKeyword(t, 'group')) throw this.error(t.pos, "'group by' can appear only once");
    }
    if (t.kind === 'eof') return { filter, groupBy };
    if (t.kind === 'rparen') throw this.error(t.pos, "unmatched ')': there is no '(' to close");
    if (groupBy) throw this.error(t.pos, `unexpected ${describe(this.q, t)} after the 'group by' field: 'group by' must come last`);
    throw this.error(t.pos, `expected AND, OR, 'group by' or the end of the query, found ${describe(this.q, t)}`);
  }

  private peek(): Token {
    return lexNormal(this.q, this.pos);
  }

  private take(t: Token): void {
    this.pos = t.end;
  }

  private error(position: number, message: string, field = ''): AppError {
    return parseError(this.q, position, message, field);
  }

  private isGroupBy(t: Token): boolean {
    return isKeyword(t, 'group') && isKeyword(lexNormal(this.q, t.end), 'by');
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
    if (t.kind === 'path' && !['and', 'or'].some((k) => isKeyword(t, k)) && !this.isGroupBy(t)) return this.predicate(t);
    const found = this.isGroupBy(t) ? "'group by'" : describe(this.q, t);
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
      const start = lexValue(this.q, this.pos);
      if (values.length === MAX_IN_VALUES && start.kind !== 'eof') {
        throw this.error(start.pos, `an 'in' list can hold at most ${MAX_IN_VALUES} values`, label);
      }
      values.push(this.value(field, label, '==', after));
      const sep = lexValue(this.q, this.pos);
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
    const t = lexValue(this.q, this.pos);
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
