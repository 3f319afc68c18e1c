// The dashboard's own endpoint for a member's one-time set-password link (docs/dashboard.md,
// "Password links from the dashboard"): session cookie and Origin, same origin.
import { ApiError, errorFrom } from './errors';

export interface PasswordLink {
  user_id: string;
  /** Whether the user already had a password (then a link comes only with `reset`). */
  has_password: boolean;
  set_password_url: string | null;
  set_password_expires_at: string | null;
}

export async function passwordLink(input: { org_id: string; user_id: string; reset?: boolean }): Promise<PasswordLink> {
  let response: Response;
  try {
    response = await fetch('/dashboard/password-links', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
  } catch {
    throw new ApiError(0, 'network', 'the server cannot be reached; check the connection and try again');
  }
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as PasswordLink;
}
