// The Tokens page's reads: the project and mode's active tokens (GET /v1/tokens, "load more" by
// cursor) through the shared paged-list hook, and the organisation's member names (GET
// /v1/orgs/{orgId}/members, every page) to name who created each token.
import { useEffect, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { usePagedList, type PagedList } from '../../api/use-paged-list';
import type { TokenInfo } from './token-rules';

/** `target` names the organisation, project and mode ('' for a role that may not list tokens: nothing is fetched). */
export function useTokens(target: string): PagedList<TokenInfo> {
  return usePagedList(
    target,
    async (cursor) => {
      if (!target) return { items: [], next: '' };
      const page = await data(api.GET('/v1/tokens', { params: { query: cursor ? { cursor } : {} } }));
      return { items: page.tokens, next: page.has_more ? page.next_cursor : '' };
    },
    (token) => token.id,
  );
}

/** User id → name (or e-mail), once `wanted` (some token has a creator); {} until then or on failure. */
export function useMemberNames(orgId: string, wanted: boolean): Record<string, string> {
  const [names, setNames] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!wanted) return;
    let current = true;
    void (async () => {
      try {
        const found: Record<string, string> = {};
        let next = '';
        do {
          const page = await data(api.GET('/v1/orgs/{orgId}/members', { params: { path: { orgId }, query: { limit: 100, ...(next ? { cursor: next } : {}) } } }));
          for (const m of page.members) found[m.id] = m.name || m.email;
          next = page.nextCursor;
        } while (next);
        if (current) setNames(found);
      } catch {
        // Names are a convenience: the ids stay.
      }
    })();
    return () => void (current = false);
  }, [wanted, orgId]);
  return names;
}
