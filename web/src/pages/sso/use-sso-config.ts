// The organisation's single sign-on configuration (GET /v1/orgs/{orgId}/sso): null when none is
// configured (404), reloaded after a save or a removal.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { ApiError } from '../../api/errors';
import type { components } from '../../api/schema';

export type SsoConfig = components['schemas']['SsoConfig'];
export type SsoDomain = components['schemas']['SsoDomain'];

export function useSsoConfig(orgId: string): { config: SsoConfig | null | undefined; error: unknown; reload: () => void } {
  const [config, setConfig] = useState<SsoConfig | null>();
  const [error, setError] = useState<unknown>();
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setError(undefined);
    data(api.GET('/v1/orgs/{orgId}/sso', { params: { path: { orgId } } })).then(
      (c) => current && setConfig(c),
      (e: unknown) => {
        if (!current) return;
        if (e instanceof ApiError && e.status === 404) setConfig(null);
        else setError(e);
      },
    );
    return () => void (current = false);
  }, [orgId, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { config, error, reload };
}
