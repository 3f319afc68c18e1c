import { badRequest } from '../errors/app-error.js';
import { parseSoql } from '../soql/index.js';
import type { SavedSearchesTable } from './tables.js';

/** `{last}` relative to now, or `{from, to}` absolute (RFC 3339). */
export type SearchRange = { last: string } | { from: string; to: string };

/** What a client sends (POST; PATCH sends part of it, `range: null` removes the range). */
export interface SavedSearchInput {
  name: string;
  q: string;
  range?: RangeInput | null;
}

/** The range as the schema lets it in: which combination is valid is checked here, naming the field. */
export interface RangeInput {
  last?: string;
  from?: string;
  to?: string;
}

export interface SavedSearchView {
  id: string;
  name: string;
  q: string;
  range: SearchRange | null;
  created_at: string;
  updated_at: string;
}

/** SOQL's relative-time units (SOQL.md `now-<n><unit>`), so the explorer turns `last` into `ts >= now-<last>` as is. */
const units = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
export const lastLimits = { min: '15m', max: '30d', minMs: 15 * units.m, maxMs: 30 * units.d } as const;

/** `15m`, `24h`, `7d`, `2w` → milliseconds; undefined for anything else. */
export function lastMs(text: string): number | undefined {
  const match = /^(\d{1,6})([smhdw])$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * units[match[2] as keyof typeof units];
}

/** An RFC 3339 date-time with a time zone (`Z` or `±hh:mm`), as ISO 8601 UTC with milliseconds. */
function instant(field: string, text: string): string {
  const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
  const ms = Date.parse(text);
  if (!rfc3339.test(text) || Number.isNaN(ms)) throw badRequest(`${field}: "${text}" is not an RFC 3339 date-time with a time zone (e.g. "2026-11-21T17:19:00Z")`, { field });
  return new Date(ms).toISOString();
}

type RangeColumns = Pick<SavedSearchesTable, 'range_last' | 'range_from' | 'range_to'>;

/** Either `{last}` within 15m…30d or `{from, to}` with from < to; every problem a 400 naming the field. */
export function checkRange(range: RangeInput | null | undefined): RangeColumns {
  if (range == null) return { range_last: null, range_from: null, range_to: null };
  const hasAbsolute = range.from !== undefined || range.to !== undefined;
  if (range.last !== undefined) {
    if (hasAbsolute) throw badRequest('range: give either last or from and to, not both', { field: 'range' });
    const ms = lastMs(range.last);
    if (ms === undefined) throw badRequest(`range.last: "${range.last}" is not a duration; write <n><unit> with unit s, m, h, d or w (e.g. "24h")`, { field: 'range.last' });
    if (ms < lastLimits.minMs || ms > lastLimits.maxMs) throw badRequest(`range.last: ${range.last} is outside ${lastLimits.min}…${lastLimits.max}`, { field: 'range.last' });
    return { range_last: range.last, range_from: null, range_to: null };
  }
  if (range.from === undefined) throw badRequest('range.from: required with range.to (or give range.last)', { field: 'range.from' });
  if (range.to === undefined) throw badRequest('range.to: required with range.from', { field: 'range.to' });
  const from = instant('range.from', range.from);
  const to = instant('range.to', range.to);
  if (from >= to) throw badRequest(`range.to: ${to} is not after range.from ${from}`, { field: 'range.to' });
  return { range_last: null, range_from: from, range_to: to };
}

/** Checks a whole search (a PATCH merged over the stored one) and answers its columns. */
export function checkSavedSearch(input: SavedSearchInput): Pick<SavedSearchesTable, 'name' | 'q'> & RangeColumns {
  if (input.name.trim() === '') throw badRequest('name: must not be blank', { field: 'name' });
  // Throws soql_parse_error with its position (and `field: ""`, DECISIONS.md §5).
  parseSoql(input.q);
  return { name: input.name, q: input.q, ...checkRange(input.range) };
}

export function rangeOf(row: RangeColumns): SearchRange | null {
  if (row.range_last !== null) return { last: row.range_last };
  if (row.range_from !== null && row.range_to !== null) return { from: row.range_from, to: row.range_to };
  return null;
}

export function toSavedSearchView(row: SavedSearchesTable): SavedSearchView {
  return { id: row.id, name: row.name, q: row.q, range: rangeOf(row), created_at: row.created_at, updated_at: row.updated_at };
}
