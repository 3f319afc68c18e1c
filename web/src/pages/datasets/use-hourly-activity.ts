// Events per hour of the last 24 hours per dataset (POST /v1/query, `stats count() by dataset,
// bin(1h)`, 40 datasets a query), for the list's sparklines; renames carry their series along.
import { useCallback, useState } from 'preact/hooks';
import { api, data } from '../../api/client';

const hourMs = 3_600_000;
const hours = 24;
/** 24 bins per dataset: 40 datasets stay under the 1,000 rows of one stats answer. */
const datasetsPerQuery = 40;

/** Counts per hour of the last 24 whole hours (UTC-aligned bins, the current hour last). */
export interface Activity {
  /** Start of each hour, in seconds (uPlot's x unit). */
  times: number[];
  byName: Map<string, number[]>;
}

async function hourlyActivity(names: string[], now = Date.now()): Promise<Activity> {
  const first = Math.floor(now / hourMs) * hourMs - (hours - 1) * hourMs;
  const end = first + hours * hourMs;
  const times = Array.from({ length: hours }, (_, i) => (first + i * hourMs) / 1000);
  const byName = new Map(names.map((n) => [n, new Array<number>(hours).fill(0)]));
  for (let i = 0; i < names.length; i += datasetsPerQuery) {
    const chunk = names.slice(i, i + datasetsPerQuery);
    const q = `dataset in (${chunk.map((n) => JSON.stringify(n)).join(', ')}) AND ts >= ${new Date(first).toISOString()} AND ts < ${new Date(end).toISOString()} stats count() by dataset, bin(1h)`;
    const answer = await data(api.POST('/v1/query', { body: { q } }));
    if (!('stats' in answer)) continue;
    for (const row of answer.stats) {
      const series = byName.get(String(row.by.dataset));
      const slot = (Date.parse(String(row.by['bin(1h)'])) - first) / hourMs;
      if (series && Number.isInteger(slot) && slot >= 0 && slot < hours) series[slot] = row.values['count()'] ?? 0;
    }
  }
  return { times, byName };
}

export interface HourlyActivity {
  activity: Activity | undefined;
  error: unknown;
  load(names: string[]): Promise<void>;
  /** A dataset renamed by the page keeps its series under its new name. */
  renamed(from: string, to: string): void;
}

export function useHourlyActivity(): HourlyActivity {
  const [activity, setActivity] = useState<Activity>();
  const [error, setError] = useState<unknown>();
  const load = useCallback(async (names: string[]) => {
    if (names.length === 0) return setActivity({ times: [], byName: new Map() });
    try {
      setActivity(await hourlyActivity(names));
      setError(undefined);
    } catch (e) {
      setError(e);
    }
  }, []);
  const renamed = useCallback((from: string, to: string) => {
    setActivity((a) => {
      if (!a) return a;
      const byName = new Map(a.byName);
      const series = byName.get(from);
      byName.delete(from);
      if (series) byName.set(to, series);
      return { ...a, byName };
    });
  }, []);
  return { activity, error, load, renamed };
}
