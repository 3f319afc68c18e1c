// A saved search's time range (DECISIONS.md §19: `{last}` of 15m…30d, `{from, to}`, or none) to
// and from the explorer's: the presets are `{last: "1h"}`…, a custom range `{from, to}` in ISO.
import { relativeRanges, type RelativeRange, type TimeRange } from './soql-text';

export type SavedRange = { last: string } | { from: string; to: string } | null;

export function savedRangeOf(range: TimeRange): SavedRange {
  if (range.kind === 'relative') return { last: range.range };
  return { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() };
}

const unitMs: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * The explorer's range of a saved one: a preset when `last` is one, else (`{last: "30m"}` saved
 * through the API) the custom range ending now; undefined for none (the explorer keeps its own).
 */
export function timeRangeOf(saved: SavedRange, now = Date.now()): TimeRange | undefined {
  if (!saved) return undefined;
  if ('last' in saved) {
    if (saved.last in relativeRanges) return { kind: 'relative', range: saved.last as RelativeRange };
    const match = /^(\d+)([smhdw])$/.exec(saved.last);
    if (!match) return undefined;
    return { kind: 'custom', from: now - Number(match[1]) * unitMs[match[2]!]!, to: now };
  }
  const from = Date.parse(saved.from);
  const to = Date.parse(saved.to);
  return Number.isFinite(from) && Number.isFinite(to) && from < to ? { kind: 'custom', from, to } : undefined;
}

/** The range in words, as the list shows it. */
export function savedRangeLabel(saved: SavedRange): string {
  if (!saved) return 'the time range chosen when opened';
  if ('last' in saved) return saved.last in relativeRanges ? relativeRanges[saved.last as RelativeRange].label : `last ${saved.last}`;
  return `${new Date(saved.from).toLocaleString()} to ${new Date(saved.to).toLocaleString()}`;
}
