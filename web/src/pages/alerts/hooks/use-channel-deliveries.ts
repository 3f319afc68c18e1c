// GET /v1/channels/{id}/deliveries: a channel's newest notifications, each with its attempts.
import { api, data } from '../../../api/client';
import { usePagedList, type PagedList } from '../../../api/use-paged-list';
import type { Delivery } from '../model';

/** `limit` a page (the Alerts page shows the last few); `reload` of the list after a test was sent. */
export function useChannelDeliveries(channelId: string, limit = 5): PagedList<Delivery> {
  return usePagedList(
    `deliveries:${channelId}`,
    async (cursor) => {
      const page = await data(api.GET('/v1/channels/{id}/deliveries', { params: { path: { id: channelId }, query: cursor ? { cursor, limit } : { limit } } }));
      return { items: page.deliveries, next: page.has_more ? page.next_cursor : '' };
    },
    (d) => d.id,
  );
}
