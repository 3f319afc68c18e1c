// GET /v1/monitors: the project's monitors, newest first, paged.
import { api, data } from '../../../api/client';
import { usePagedList, type PagedList } from '../../../api/use-paged-list';
import { useSession } from '../../../session';
import type { Monitor } from '../model';

export function useMonitors(): PagedList<Monitor> {
  const { target } = useSession();
  return usePagedList(
    `monitors:${target.org_id}:${target.project_id}:${target.mode}`,
    async (cursor) => {
      const page = await data(api.GET('/v1/monitors', { params: { query: cursor ? { cursor } : {} } }));
      return { items: page.monitors, next: page.has_more ? page.next_cursor : '' };
    },
    (m) => m.id,
  );
}
