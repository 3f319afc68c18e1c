// Saves the editor's query and time range under a name (POST /v1/searches, logs:write).
import { useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { ApiError } from '../../api/errors';
import { savedRangeOf } from './saved-range';
import type { TimeRange } from './soql-text';
import type { SavedSearch } from './use-saved-searches';

export interface SaveSearch {
  busy: boolean;
  error: unknown;
  /** The saved search, or undefined when it was refused (`error` says why). */
  save(name: string, q: string, range: TimeRange): Promise<SavedSearch | undefined>;
  reset(): void;
}

export function useSaveSearch(): SaveSearch {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const save = async (name: string, q: string, range: TimeRange) => {
    setBusy(true);
    setError(undefined);
    try {
      return await data(api.POST('/v1/searches', { body: { name: name.trim(), q, range: savedRangeOf(range) } }));
    } catch (e) {
      // The name is unique per project and mode: say what to do rather than only "conflict".
      setError(e instanceof ApiError && e.status === 409 ? new ApiError(e.status, e.code, `${e.message}: choose another name, or delete the saved search of that name first`, e.details) : e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, save, reset: () => setError(undefined) };
}
