// The project and mode's files (GET /v1/media, "load more" by cursor, `folder`, `tag` and
// `deleted` from the page's filter) through the shared paged-list hook.
import { api, data } from '../../api/client';
import { usePagedList, type PagedList } from '../../api/use-paged-list';
import type { Filter } from './media-filter';
import type { ListedFile, MediaFile } from './media-upload';

const pageSize = 24;

/** `key` names the target and filter; `seen` is told each page's files (the filters' suggestions). */
export function useMedia(key: string, filter: Filter, seen: (files: MediaFile[]) => void): PagedList<ListedFile> {
  return usePagedList(
    key,
    async (cursor) => {
      const query = {
        limit: pageSize,
        ...(cursor ? { cursor } : {}),
        ...(filter.folder ? { folder: filter.folder } : {}),
        ...(filter.tag ? { tag: filter.tag } : {}),
        ...(filter.view === 'deleted' ? { deleted: true } : {}),
      };
      const page = await data(api.GET('/v1/media', { params: { query } }));
      seen(page.files);
      return { items: page.files, next: page.has_more ? page.next_cursor : '' };
    },
    (file) => file.id,
  );
}
