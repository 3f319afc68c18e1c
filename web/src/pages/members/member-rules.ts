// The Members page's shared words and types: what each role may do, and the owner and role
// rules' refusals explained (DECISIONS.md §17).
import type { components } from '../../api/schema';
import { ApiError } from '../../api/errors';
import type { PasswordLink } from '../../api/password-links';

export type Member = components['schemas']['Member'];
export type Role = components['schemas']['Role'];

/** A link made for a member, shown until dismissed. */
export interface IssuedLink {
  member: Pick<Member, 'id' | 'email' | 'name'>;
  link: PasswordLink;
  /** Why it was made: a new member, or a reset for one who has a password. */
  invited: boolean;
}

/** What each system role may do in the dashboard (docs/dashboard.md's scopes by role). */
export const roleHelp: Record<string, string> = {
  Owner: 'everything, including changing Owners',
  Admin: 'everything except changing Owners',
  Developer: 'media, events, queries, live tail, their own tokens; reads members and usage',
  Viewer: 'reads media, events, members and usage',
};

/** The owner rules' and role rules' refusals, in words beside the API's message. */
export function explainMemberError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 409 && /owner/i.test(error.message)) {
    return new ApiError(
      error.status,
      error.code,
      `Refused: ${error.message}. An organisation always keeps its primary owner and at least one Owner, so neither can be demoted or removed. ` +
        'Make another member Owner first (Change role → Owner); moving the primary ownership is done by an operator with opsctl owner transfer --org ORG_ID --to USER_ID.',
      error.details,
    );
  }
  if (error.status === 409) return new ApiError(error.status, error.code, `Refused: ${error.message}.`, error.details);
  if (error.status === 403) return new ApiError(error.status, error.code, `Not allowed: ${error.message}.`, error.details);
  if (error.status === 404) return new ApiError(error.status, error.code, `${error.message}: someone may have removed this member meanwhile; the list is reloaded.`, error.details);
  return error;
}

