// The organisation's members (GET /v1/orgs/{orgId}/members, "load more" by nextCursor) through
// the shared paged-list hook, and its roles (GET /v1/orgs/{orgId}/roles).
import { useEffect, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { usePagedList, type PagedList } from '../../api/use-paged-list';
import type { Member, Role } from './member-rules';

export function useMembers(orgId: string): PagedList<Member> {
  return usePagedList(
    orgId,
    async (cursor) => {
      const page = await data(api.GET('/v1/orgs/{orgId}/members', { params: { path: { orgId }, query: cursor ? { cursor } : {} } }));
      return { items: page.members, next: page.nextCursor };
    },
    (member) => member.id,
  );
}

export function useRoles(orgId: string): { roles: Role[]; error: unknown } {
  const [roles, setRoles] = useState<Role[]>([]);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let current = true;
    setError(undefined);
    data(api.GET('/v1/orgs/{orgId}/roles', { params: { path: { orgId } } })).then(
      (r) => current && setRoles(r.roles),
      (e: unknown) => current && setError(e),
    );
    return () => void (current = false);
  }, [orgId]);
  return { roles, error };
}
