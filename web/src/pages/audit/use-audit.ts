// The Audit page's read: the organisation's audit log (GET /v1/orgs/{orgId}/audit), newest first,
// "load more" by cursor through the shared paged-list hook; the filters are part of the list's key,
// so changing one starts the list over.
import type { components, paths } from '../../api/schema';
import { api, data } from '../../api/client';
import { usePagedList, type PagedList } from '../../api/use-paged-list';

export type AuditEntry = components['schemas']['AuditEntry'];
export type AuditAction = NonNullable<paths['/v1/orgs/{orgId}/audit']['get']['parameters']['query']>['action'];

/** The filters as the form holds them: '' for "any". */
export interface AuditFilters {
  actor: string;
  action: string;
  target_id: string;
  /** ISO 8601, or ''. */
  from: string;
  to: string;
}

export const noFilters: AuditFilters = { actor: '', action: '', target_id: '', from: '', to: '' };

/** `orgId` '' (a role without audit:read) fetches nothing. */
export function useAudit(orgId: string, filters: AuditFilters): PagedList<AuditEntry> {
  const query = Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== '')) as Partial<AuditFilters>;
  return usePagedList(
    orgId ? `${orgId}?${new URLSearchParams(query).toString()}` : '',
    async (cursor) => {
      if (!orgId) return { items: [], next: '' };
      const page = await data(
        api.GET('/v1/orgs/{orgId}/audit', { params: { path: { orgId }, query: { ...query, action: query.action as AuditAction, limit: 50, ...(cursor ? { cursor } : {}) } } }),
      );
      return { items: page.entries, next: page.has_more ? page.next_cursor : '' };
    },
    (entry) => entry.id,
  );
}
