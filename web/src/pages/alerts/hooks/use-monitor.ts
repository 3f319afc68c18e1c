// GET /v1/monitors/{id}: one monitor (its page and its edit form).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, data } from '../../../api/client';
import type { Monitor } from '../model';

export interface MonitorState {
  monitor: Monitor | undefined;
  error: unknown;
  /** Replaces the monitor shown (after a PATCH answered the new one). */
  set(monitor: Monitor): void;
  reload(): void;
}

export function useMonitor(id: string): MonitorState {
  const [monitor, setMonitor] = useState<Monitor>();
  const [error, setError] = useState<unknown>();
  const load = useCallback(async () => {
    setError(undefined);
    try {
      const found = await data(api.GET('/v1/monitors/{id}', { params: { path: { id } } }));
      setMonitor(found);
    } catch (e) {
      setError(e);
    }
  }, [id]);
  useEffect(() => {
    setMonitor(undefined);
    void load();
  }, [load]);
  return { monitor, error, set: setMonitor, reload: () => void load() };
}
