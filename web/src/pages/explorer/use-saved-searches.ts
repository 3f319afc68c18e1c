// The project and mode's saved searches (GET /v1/searches, logs:read; DECISIONS.md §19), newest
// first, "load more" by cursor: the shared paged-list hook, restarted when the target changes.
import { api, data } from '../../api/client';
import type { components } from '../../api/schema';
import { usePagedList, type PagedList } from '../../api/use-paged-list';

export type SavedSearch = components['schemas']['SavedSearch'];

/** `target` names the organisation, project and mode: another one lists its own searches. */
export function useSavedSearches(target: string): PagedList<SavedSearch> {
  return usePagedList(
    target,
    async (cursor) => {
      const page = await data(api.GET('/v1/searches', { params: { query: cursor ? { cursor } : {} } }));
      return { items: page.searches, next: page.has_more ? page.next_cursor : '' };
    },
    (search) => search.id,
  );
}
