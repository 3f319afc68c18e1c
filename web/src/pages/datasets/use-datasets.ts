// The project and mode's active datasets (GET /v1/datasets: one answer, not paged), and the plan's
// retention (GET /v1/billing, when the role may read billing).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { useSession } from '../../session';
import type { Summary } from './dataset-rules';

export interface Datasets {
  datasets: Summary[] | undefined;
  error: unknown;
  /** Fetches the list again; resolves to it, or undefined when it failed (`error` says why). */
  reload(): Promise<Summary[] | undefined>;
}

/** The list; fetched by the first reload() (the caller decides when, with what follows). */
export function useDatasets(): Datasets {
  const [datasets, setDatasets] = useState<Summary[]>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(async () => {
    try {
      const list = (await data(api.GET('/v1/datasets'))).datasets;
      setDatasets(list);
      setError(undefined);
      return list;
    } catch (e) {
      setError(e);
      return undefined;
    }
  }, []);
  return { datasets, error, reload };
}

/** One dataset's summary by name (the schema page's header), undefined until known or when absent. */
export function useDatasetSummary(name: string): Summary | undefined {
  const [summary, setSummary] = useState<Summary>();
  useEffect(() => {
    let current = true;
    data(api.GET('/v1/datasets'))
      .then((list) => current && setSummary(list.datasets.find((d) => d.name === name)))
      .catch(() => undefined);
    return () => void (current = false);
  }, [name]);
  return summary;
}

/** The plan's retention (the most a dataset may keep), when the role may read billing. */
export function usePlanRetention(): { days: number; plan: string } | undefined {
  const { can } = useSession();
  const [retention, setRetention] = useState<{ days: number; plan: string }>();
  useEffect(() => {
    if (!can('billing:read')) return;
    data(api.GET('/v1/billing'))
      .then((b) => setRetention({ days: b.plan_limits.retention_days, plan: b.plan }))
      .catch(() => undefined);
  }, [can]);
  return retention;
}
