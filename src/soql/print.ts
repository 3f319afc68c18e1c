/**
 * Prints a query back to SOQL text that parses to the same tree (positions aside). Used by the
 * property tests, and handy for logs: the printed form is canonical (payload keys always under
 * `payload.`, keywords upper case, parentheses only where the tree needs them).
 */
import { severities } from '../shared/event-record.js';
import type { Expr, FieldRef, SoqlQuery, StatsAggregate, StatsByItem, StatsClause, Value } from './ast.js';

const BARE_KEY = /^[A-Za-z0-9_@$-]+$/;

const printKey = (key: string): string => (BARE_KEY.test(key) ? key : `\`${key.replace(/`/g, '``')}\``);

export const printField = (f: FieldRef): string =>
  f.kind === 'canonical' ? f.name : `payload.${f.path.map(printKey).join('.')}`;

export const quoteString = (text: string): string => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

export function printValue(v: Value): string {
  switch (v.type) {
    case 'text':
      return v.quoted ? quoteString(v.text) : v.text;
    case 'severity':
      return severities[v.level] ?? 'info';
    case 'number':
      return v.text;
    case 'uuid':
      return v.uuid;
    case 'time':
      if (v.time.kind === 'absolute') return new Date(v.time.ms).toISOString();
      return v.time.amount === 0 ? 'now' : `now-${v.time.amount}${v.time.unit}`;
  }
}

function printExpr(e: Expr): string {
  switch (e.type) {
    case 'and':
      // A nested AND or an OR inside an AND only exists when the source had parentheses.
      return e.items.map((i) => (i.type === 'and' || i.type === 'or' ? `(${printExpr(i)})` : printExpr(i))).join(' AND ');
    case 'or':
      return e.items.map((i) => (i.type === 'or' ? `(${printExpr(i)})` : printExpr(i))).join(' OR ');
    case 'not':
      return `NOT ${e.expr.type === 'and' || e.expr.type === 'or' ? `(${printExpr(e.expr)})` : printExpr(e.expr)}`;
    case 'compare': {
      const value = printValue(e.value);
      // `source:eu` reads best, but a value starting with an operator character would merge
      // with the operator (`a:=b` lexes as the operator ':='), so those get spaces.
      const tight = (e.op === ':' || e.op === '!:') && !/^[:!=<>]/.test(value);
      return tight ? `${printField(e.field)}${e.op}${value}` : `${printField(e.field)} ${e.op} ${value}`;
    }
    case 'in':
      return `${printField(e.field)} in (${e.values.map(printValue).join(', ')})`;
    case 'exists':
      return `${printField(e.field)} exists`;
    case 'freetext':
      return quoteString(e.text);
  }
}

export function printSoql(query: SoqlQuery): string {
  const parts: string[] = [];
  if (query.filter) parts.push(printExpr(query.filter));
  if (query.groupBy) parts.push(`group by ${printField(query.groupBy)}`);
  if (query.stats) parts.push(printStats(query.stats));
  return parts.join(' ');
}

/** An aggregate's canonical text, its key in a stats answer: `count()`, `p95(payload.ping)`. */
export const aggregateText = (a: StatsAggregate): string => (a.fn === 'count' ? 'count()' : `${a.fn}(${printField(a.field)})`);

/** A by-item's canonical text, its key in a stats answer: `source`, `payload.map`, `bin(5m)`. */
export const byItemText = (b: StatsByItem): string => (b.kind === 'bin' ? `bin(${b.amount}${b.unit})` : printField(b.field));

function printStats(stats: StatsClause): string {
  const aggregates = stats.aggregates.map(aggregateText).join(', ');
  return stats.by.length ? `stats ${aggregates} by ${stats.by.map(byItemText).join(', ')}` : `stats ${aggregates}`;
}
