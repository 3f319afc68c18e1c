import type { Tenant } from '../tenancy/tenant.js';
import type { QueryService } from '../query/query-service.js';
import { badRequest } from '../errors/app-error.js';
import { checkDuration } from './durations.js';
import { breaches } from './state-machine.js';
import { limits, parseThresholdQuery, type Condition } from './monitor.js';
import { withinWindow } from './window-query.js';

export interface PreviewInput {
  q: string;
  every?: string;
  condition: Condition;
  for?: string;
  no_data?: 'ok' | 'alerting';
  from?: string;
  to?: string;
}

export interface Preview {
  points: Array<{ ts: string; group: Record<string, unknown>; value: number | null }>;
  firings: Array<{ group: Record<string, unknown>; from: string; to: string }>;
}

/**
 * POST /monitors/preview: the monitor's stats query by bin(every) over the range (default the
 * last 24 h) in one query, and when each group would have fired: a run of breaching bins at
 * least `for` long. An approximation of evaluation (each bin stands for one window of `every`).
 */
export async function preview(queries: QueryService, tenant: Tenant, input: PreviewInput, now: number): Promise<Preview> {
  const everyMs = checkDuration('every', input.every ?? '1m', ...limits.every);
  const forMs = checkDuration('for', input.for ?? '0s', ...limits.for);
  const to = input.to ? Date.parse(input.to) : now;
  const from = input.from ? Date.parse(input.from) : to - 86_400_000;
  if (!(from < to) || to - from > 86_400_000) throw badRequest('from, to: from must be before to, at most 24 h apart', { field: 'from' });
  const query = parseThresholdQuery(input.q);
  const bin = { kind: 'bin' as const, amount: everyMs / 1_000, unit: 's' as const, position: 0 };
  const result = await queries.run(tenant, { ...query, filter: withinWindow(query, from, to), stats: { ...query.stats!, by: [...query.stats!.by, bin] } });
  if (result.kind !== 'stats') return { points: [], firings: [] };
  const points = result.stats.map((row) => {
    const entries = Object.entries(row.by);
    const [, ts] = entries[entries.length - 1]!;
    return { ts: String(ts), group: Object.fromEntries(entries.slice(0, -1)), value: Object.values(row.values)[0] ?? null };
  });
  const byGroup = new Map<string, typeof points>();
  for (const p of points) byGroup.set(JSON.stringify(p.group), [...(byGroup.get(JSON.stringify(p.group)) ?? []), p]);
  const firings: Preview['firings'] = [];
  for (const series of byGroup.values()) {
    let start: number | undefined;
    let last: number | undefined;
    const close = () => {
      if (start !== undefined && last !== undefined && last + everyMs - start > forMs) firings.push({ group: series[0]!.group, from: new Date(start + forMs).toISOString(), to: new Date(last + everyMs).toISOString() });
      start = last = undefined;
    };
    for (const p of series) {
      const ts = Date.parse(p.ts);
      const bad = breaches(p.value, input.condition, input.no_data ?? 'ok');
      if (bad && last !== undefined && ts !== last + everyMs) close();
      if (bad) {
        start ??= ts;
        last = ts;
      } else close();
    }
    close();
  }
  return { points, firings };
}
