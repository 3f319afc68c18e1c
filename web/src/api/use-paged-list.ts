// One paged list for every page that shows a cursor-paged collection (members, tokens, media,
// monitors, channels, saved searches, …): the first page on mount and whenever `key` changes,
// "load more" by the API's cursor, rows de-duplicated by id across pages (a row created between
// two page fetches can appear twice), and answers for an older key dropped, so switching project
// or filter mid-request never shows the previous list.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/** One page as the hook needs it; each page's fetch maps the API's answer to this. */
export interface Page<T> {
  items: T[];
  /** The cursor of the next page, or '' when this was the last one. */
  next: string;
}

export interface PagedList<T> {
  /** undefined until the first page arrived (or after `key` changed). */
  items: T[] | undefined;
  /** More pages exist: show "Load more". */
  hasMore: boolean;
  loading: boolean;
  error: unknown;
  loadMore(): void;
  /** Fetches the first page again (after a change the page made). */
  reload(): void;
  /** Changes the rows shown without a fetch: a row created, updated or removed by this page. */
  update(change: (items: T[]) => T[]): void;
}

/**
 * `fetchPage(cursor)` fetches one page ('' for the first). `key` names what is listed (target,
 * filters): when it changes the list starts over. `idOf` de-duplicates rows across pages.
 */
export function usePagedList<T>(key: string, fetchPage: (cursor: string) => Promise<Page<T>>, idOf: (item: T) => string): PagedList<T> {
  const [items, setItems] = useState<T[]>();
  const [next, setNext] = useState('');
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>();
  const current = useRef(key);
  // The latest fetcher without restarting the list on every render (it is usually a closure).
  const fetcher = useRef(fetchPage);
  fetcher.current = fetchPage;
  const ids = useRef(idOf);
  ids.current = idOf;

  const load = useCallback(async (forKey: string, cursor: string) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await fetcher.current(cursor);
      if (current.current !== forKey) return;
      setItems((before) => {
        if (!cursor || !before) return page.items;
        const known = new Set(before.map(ids.current));
        return [...before, ...page.items.filter((item) => !known.has(ids.current(item)))];
      });
      setNext(page.next);
    } catch (e) {
      if (current.current === forKey) setError(e);
    } finally {
      if (current.current === forKey) setLoading(false);
    }
  }, []);

  useEffect(() => {
    current.current = key;
    setItems(undefined);
    setNext('');
    void load(key, '');
  }, [key, load]);

  return {
    items,
    hasMore: next !== '',
    loading,
    error,
    loadMore: () => {
      if (next && !loading) void load(current.current, next);
    },
    reload: () => void load(current.current, ''),
    update: (change) => setItems((before) => (before ? change(before) : before)),
  };
}
