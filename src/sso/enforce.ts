import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import { forbidden, type AppError } from '../errors/app-error.js';
import { SsoStore } from './sso-store.js';

/**
 * DECISIONS.md §22 `enforce`: why this user may not sign in with a password, or undefined when
 * they may. Refused when any organisation they belong to enforces single sign-on and they are
 * not its primary owner (the primary owner keeps the password: the way back in when the
 * provider is down). Asked by the dashboard's password sign-in once the password matched, so
 * the answer tells nothing to someone guessing passwords.
 */
export async function passwordSignInRefusal(db: Kysely<Database>, userId: string): Promise<AppError | undefined> {
  const enforcing = await new SsoStore(db).enforcingOrgs(userId);
  if (enforcing.length === 0) return undefined;
  const names = enforcing.map((o) => `"${o.name}"`).join(', ');
  return forbidden(`${names} ${enforcing.length > 1 ? 'require' : 'requires'} single sign-on: use "Sign in with SSO" with your work e-mail instead of a password`, { sso_required: true });
}
