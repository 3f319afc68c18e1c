// GET /v1/monitors: the project's monitors with their status, newest first, paged; the status of
// the monitors shown read again every 15 s while the page is visible.
import { useEffect, useRef } from 'preact/hooks';
import { api, data } from '../../../api/client';
import { usePagedList, type PagedList } from '../../../api/use-paged-list';
import { useSession } from '../../../session';
import type { Monitor } from '../model';

export const statusRefreshMs = 15_000;

export function useMonitors(): PagedList<Monitor> {
  const { target } = useSession();
  const list = usePagedList(
    `monitors:${target.org_id}:${target.project_id}:${target.mode}`,
    async (cursor) => {
      const page = await data(api.GET('/v1/monitors', { params: { query: cursor ? { cursor } : {} } }));
      return { items: page.monitors, next: page.has_more ? page.next_cursor : '' };
    },
    (m) => m.id,
  );
  // Bumped by every change the page makes (a mute): a refresh that started before it is dropped.
  const edits = useRef(0);
  const latest = useRef(list);
  latest.current = list;
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState !== 'visible' || latest.current.items === undefined) return;
      const started = edits.current;
      // The first page again, merged over the rows shown (the pages loaded by "Load more" stay).
      void data(api.GET('/v1/monitors', { params: { query: {} } })).then(
        (page) => {
          if (edits.current !== started) return;
          const fresh = new Map(page.monitors.map((m) => [m.id, m]));
          latest.current.update((all) => all.map((m) => fresh.get(m.id) ?? m));
        },
        () => {
          // The next refresh tries again; the list keeps what it shows.
        },
      );
    }, statusRefreshMs);
    return () => clearInterval(timer);
  }, [target.org_id, target.project_id, target.mode]);
  return {
    ...list,
    update: (change) => {
      edits.current++;
      list.update(change);
    },
  };
}
