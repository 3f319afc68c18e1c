/**
 * `stats` (SOQL.md "Statistics") before any engine: the row limits, and the query's time range
 * and bin count checked against `now` (planStats). The engines compile the rest
 * (engine/soql-stats.ts).
 */
import { AppError } from '../errors/app-error.js';
import { binUnits, type Expr, type SoqlQuery, type StatsByItem, type StatsClause } from './ast.js';
import { nearText } from './lexer.js';
import { resolveTime } from './literals.js';
import { byItemText } from './print.js';

/** Bins over the query's time range (SOQL.md). */
export const maxBins = 1_440;
/** Rows of a stats answer (SOQL.md: a page, no cursor). */
export const maxStatsRows = 1_000;
/**
 * …except a histogram (a bin the only by-item): all its bins, which planStats bounds to 1,440
 * over the range (one more when the range starts between two edges). SOQL.md allows 1,440 bins
 * and 1,000 rows; cutting `stats count() by bin(1m)` over 24 hours at 1,000 would silently
 * drop its newest seven hours.
 */
export const maxHistogramRows = maxBins + 1;

/** The row limit of a stats query. */
export const statsRowLimit = (stats: StatsClause): number =>
  stats.by.length === 1 && stats.by[0]!.kind === 'bin' ? maxHistogramRows : maxStatsRows;
/** A query with a bin and no lower ts bound covers this much (SOQL.md). */
export const defaultBinRangeMs = 86_400_000;

export const binMs = (b: StatsByItem & { kind: 'bin' }): number => b.amount * binUnits[b.unit];

/** The `ts` bounds the filter's top-level conditions set: `ts >= now-1h AND …`. */
function timeBounds(filter: Expr | null, now: number): { lower?: number; upper?: number } {
  const items = !filter ? [] : filter.type === 'and' ? filter.items : [filter];
  let lower: number | undefined;
  let upper: number | undefined;
  for (const e of items) {
    if (e.type !== 'compare' || e.field.kind !== 'canonical' || e.field.name !== 'ts' || e.value.type !== 'time') continue;
    const ms = resolveTime(e.value.time, now);
    if (e.op === '>=' || e.op === '>') lower = Math.max(lower ?? -Infinity, ms);
    if (e.op === '<=' || e.op === '<') upper = Math.min(upper ?? Infinity, ms);
  }
  return { lower, upper };
}

/** Bin widths suggested when one gives too many bins. */
const niceBins = ['1s', '5s', '10s', '15s', '30s', '1m', '2m', '5m', '10m', '15m', '30m', '1h', '2h', '3h', '6h', '12h', '1d', '2d', '7d', '14d', '30d', '90d', '366d'];
const widthOf = (text: string): number => Number(text.slice(0, -1)) * binUnits[text.slice(-1) as keyof typeof binUnits];

/**
 * The query a stats query runs as: with a bin and no lower `ts` bound, `ts >= now-24h` is added
 * (SOQL.md); a bin giving more than 1,440 bins over the range is a soql_parse_error at the
 * bin, naming a width that fits. The range ends at the filter's upper bound, else now.
 */
export function planStats(query: SoqlQuery, q: string, now: number): SoqlQuery {
  const stats = query.stats;
  const bin = stats?.by.find((b): b is StatsByItem & { kind: 'bin' } => b.kind === 'bin');
  if (!stats || !bin) return query;
  const bounds = timeBounds(query.filter, now);
  let filter = query.filter;
  if (bounds.lower === undefined) {
    const lowerBound: Expr = {
      type: 'compare',
      field: { kind: 'canonical', name: 'ts' },
      op: '>=',
      value: { type: 'time', time: { kind: 'relative', amount: defaultBinRangeMs / 3_600_000, unit: 'h' } },
      position: stats.position,
    };
    filter = filter ? { type: 'and', items: [filter, lowerBound], position: filter.position } : lowerBound;
  }
  const lower = bounds.lower ?? now - defaultBinRangeMs;
  const upper = Math.max(bounds.upper ?? now, lower);
  // The range in bins: 24 hours is 1,440 one-minute bins (the answer may hold one more when
  // the range does not start on a bin's edge).
  const bins = Math.max(1, Math.ceil((upper - lower) / binMs(bin)));
  if (bins > maxBins) {
    const range = upper - lower;
    const fits = niceBins.find((text) => Math.ceil(range / widthOf(text)) <= maxBins);
    const days = (range / 86_400_000).toLocaleString('en', { maximumFractionDigits: 1 });
    throw new AppError(
      'soql_parse_error',
      `${byItemText(bin)} gives ${bins.toLocaleString('en')} bins over the query's ${days} days (at most ${maxBins.toLocaleString('en')}): ` +
        (fits ? `use bin(${fits}) or wider, or narrow the ts range` : 'narrow the ts range'),
      { position: bin.position, near: nearText(q, bin.position), field: 'ts' },
    );
  }
  return { ...query, filter };
}
