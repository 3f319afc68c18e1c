// GET /v1/channels: the project's notification channels, newest first, paged.
import { api, data } from '../../../api/client';
import { usePagedList, type PagedList } from '../../../api/use-paged-list';
import { useSession } from '../../../session';
import type { Channel } from '../model';

export function useChannels(): PagedList<Channel> {
  const { target } = useSession();
  return usePagedList(
    `channels:${target.org_id}:${target.project_id}:${target.mode}`,
    async (cursor) => {
      const page = await data(api.GET('/v1/channels', { params: { query: cursor ? { cursor, limit: 100 } : { limit: 100 } } }));
      return { items: page.channels, next: page.has_more ? page.next_cursor : '' };
    },
    (c) => c.id,
  );
}
