/**
 * Reading typed literals (times, numbers, UUIDs, severities) and the interpretations of a bare
 * payload value, shared by the parser and both back ends so they can never disagree. Every
 * regular expression here is anchored and free of nested quantifiers (no backtracking blow-up).
 */
import { severities } from '../shared/event-record.js';
import { timeUnits, type TimeUnit, type TimeValue } from './ast.js';

/** The largest span a JavaScript Date can express; relative times beyond it are refused. */
const MAX_OFFSET_MS = 8.64e15;
/** ISO times are printed with toISOString(), which only round-trips for years 0000–9999. */
const MIN_TIME_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const MAX_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const RELATIVE = /^(?:now)?-(\d{1,20})([smhdw])$/i;
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

export type TimeParse = { ok: true; time: TimeValue } | { ok: false; reason: 'syntax' | 'range' };

/** ISO 8601 date or date-time (UTC when no offset is given), `now`, `now-15m`, `-1h`. */
export function parseTime(text: string): TimeParse {
  if (text.toLowerCase() === 'now') return { ok: true, time: { kind: 'relative', amount: 0, unit: 's' } };
  const rel = RELATIVE.exec(text);
  if (rel) {
    // Units are lower case only: `M` would be ambiguous between minutes and months.
    const unit = rel[2] as TimeUnit;
    if (unit !== unit.toLowerCase()) return { ok: false, reason: 'syntax' };
    const amount = Number(rel[1]);
    if (amount * timeUnits[unit] > MAX_OFFSET_MS) return { ok: false, reason: 'range' };
    return { ok: true, time: { kind: 'relative', amount, unit: amount === 0 ? 's' : unit } };
  }
  const m = ISO.exec(text);
  if (!m) return { ok: false, reason: 'syntax' };
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number, number, number, number, number, number,
  ];
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) {
    return { ok: false, reason: 'syntax' };
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day); // setUTCFullYear, unlike Date.UTC, keeps years 0–99
  if (d.getUTCDate() !== day) return { ok: false, reason: 'syntax' }; // 2023-02-30
  d.setUTCHours(hour, minute, second, ms);
  let offsetMin = 0;
  const zone = m[8];
  if (zone && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2));
    if (oh > 23 || om > 59) return { ok: false, reason: 'syntax' };
    offsetMin = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  const at = d.getTime() - offsetMin * 60_000;
  if (at < MIN_TIME_MS || at > MAX_TIME_MS) return { ok: false, reason: 'range' };
  return { ok: true, time: { kind: 'absolute', ms: at } };
}

/**
 * Epoch milliseconds of a time value against the given clock. Whole milliseconds only: the
 * DuckDB side binds a BIGINT, and a fractional bound would make `>` disagree between back ends.
 */
export function resolveTime(time: TimeValue, now: number): number {
  return time.kind === 'absolute' ? time.ms : Math.floor(now) - time.amount * timeUnits[time.unit];
}

const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** A finite number written as a JSON-like literal, else null (`1e999` is not a number). */
export function parseNumber(text: string): number | null {
  if (!NUMBER.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

export { isUuidAnyCase as isUuid } from '../shared/ids.js';

/** Index into `severities` of a severity name in any case, else -1. */
export const severityLevel = (text: string): number =>
  (severities as readonly string[]).indexOf(text.toLowerCase());

/**
 * What a payload comparison value can stand for besides its text. Only an unquoted word has
 * these readings: `ping > 150` compares numerically when the stored value is a number, while
 * `ping > "150"` always compares text.
 */
export interface PayloadReadings {
  text: string;
  number: number | null;
  boolean: boolean | null;
  isNull: boolean;
}

export function payloadReadings(text: string, quoted: boolean): PayloadReadings {
  if (quoted) return { text, number: null, boolean: null, isNull: false };
  return {
    text,
    number: parseNumber(text),
    boolean: text === 'true' ? true : text === 'false' ? false : null,
    isNull: text === 'null',
  };
}

/** A bare (unquoted) `:` value containing `*` is a wildcard over the whole field. */
export const isWildcard = (text: string, quoted: boolean): boolean => !quoted && text.includes('*');
