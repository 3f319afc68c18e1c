// The Usage page's requests, one hook each: the organisation's quotas (GET /v1/usage,
// usage:read), the plan and its limits (GET /v1/billing, billing:read: Owner and Admin), and this
// project's dataset count (GET /v1/datasets). Each loads on mount and again on reload().
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, data } from '../../api/client';

const loadUsage = () => data(api.GET('/v1/usage'));
const loadBilling = () => data(api.GET('/v1/billing'));
export type Usage = Awaited<ReturnType<typeof loadUsage>>;
export type Billing = Awaited<ReturnType<typeof loadBilling>>;
/** The reserved dataset does not count toward the plan's cap (DECISIONS.md §9). */
const reservedDataset = 'default';

export interface Loaded<T> {
  value: T | undefined;
  error: unknown;
  reload(): Promise<void>;
}

/** `load` runs when `enabled` (on mount, when it becomes so, and on reload()); a failure keeps the last value. */
function useLoaded<T>(load: () => Promise<T>, enabled: boolean, quiet = false): Loaded<T> {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(async () => {
    if (!enabled) return;
    setError(undefined);
    try {
      setValue(await load());
    } catch (e) {
      if (!quiet) setError(e);
    }
  }, [enabled]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { value, error, reload };
}

export function useUsage(): Loaded<Usage> {
  return useLoaded(loadUsage, true);
}

export function useBilling(enabled: boolean): Loaded<Billing> {
  return useLoaded(loadBilling, enabled);
}

/** This project's active datasets but "default" (a convenience: a failure shows nothing). */
export function useDatasetCount(enabled: boolean): Loaded<number> {
  return useLoaded(async () => (await data(api.GET('/v1/datasets'))).datasets.filter((d) => d.name !== reservedDataset).length, enabled, true);
}
