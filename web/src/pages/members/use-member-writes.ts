// The Members page's writes, one hook a request: invite (POST /v1/orgs/{orgId}/members), change
// role (PATCH …/members/{userId}), remove (DELETE …/members/{userId}), a password link (POST
// /dashboard/password-links). Each throws the refusal
// explained in words (member-rules.ts) for the dialog or form to show.
import { api, data } from '../../api/client';
import { passwordLink, type PasswordLink } from '../../api/password-links';
import { useSession } from '../../session';
import { explainMemberError, type Member } from './member-rules';

async function explained<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    throw explainMemberError(e);
  }
}

export function useInviteMember(): (body: { email: string; roleId: string; name?: string }) => Promise<Member> {
  const { target } = useSession();
  return (body) => explained(() => data(api.POST('/v1/orgs/{orgId}/members', { params: { path: { orgId: target.org_id } }, body })));
}

export function useChangeRole(): (userId: string, roleId: string) => Promise<void> {
  const { target } = useSession();
  return (userId, roleId) => explained(async () => void (await data(api.PATCH('/v1/orgs/{orgId}/members/{userId}', { params: { path: { orgId: target.org_id, userId } }, body: { roleId } }))));
}

export function useRemoveMember(): (userId: string) => Promise<void> {
  const { target } = useSession();
  return (userId) => explained(async () => void (await data(api.DELETE('/v1/orgs/{orgId}/members/{userId}', { params: { path: { orgId: target.org_id, userId } } }))));
}

/** A one-time set-password link for a member of this organisation (POST /dashboard/password-links); `reset` makes one for a user who has a password. */
export function usePasswordLink(): (userId: string, reset?: boolean) => Promise<PasswordLink> {
  const { target } = useSession();
  return (userId, reset = false) => passwordLink({ org_id: target.org_id, user_id: userId, ...(reset ? { reset: true } : {}) });
}
