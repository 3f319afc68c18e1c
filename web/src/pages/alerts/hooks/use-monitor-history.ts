// GET /v1/monitors/{id}/history: state changes and notifications (with every attempt), newest first.
import { api, data } from '../../../api/client';
import { usePagedList, type PagedList } from '../../../api/use-paged-list';
import type { HistoryItem } from '../model';

export function useMonitorHistory(monitorId: string, limit = 50): PagedList<HistoryItem> {
  return usePagedList(
    `history:${monitorId}:${limit}`,
    async (cursor) => {
      const page = await data(api.GET('/v1/monitors/{id}/history', { params: { path: { id: monitorId }, query: cursor ? { cursor, limit } : { limit } } }));
      return { items: page.history, next: page.has_more ? page.next_cursor : '' };
    },
    (h) => `${h.type}:${h.id}`,
  );
}
