// The dashboard's own endpoints (docs/dashboard.md): sign-in, the session, and the exchange of
// the session for a short-lived API token. Same origin, so the browser sends the cookie and the
// Origin header the server checks on unsafe methods.
import { ApiError, errorFrom } from './errors';

export type Mode = 'live' | 'test';
export interface Target {
  org_id: string;
  project_id: string;
  mode: Mode;
}
export interface Membership {
  org_id: string;
  org_name: string;
  role: string;
  projects: Array<{ project_id: string; name: string }>;
}
export interface SessionInfo {
  user: { id: string; email: string; name: string };
  memberships: Membership[];
  preferences: Target | null;
}
export interface SessionToken {
  token: string;
  token_id: string;
  expires_at: string;
  scopes: string[];
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', 'the server cannot be reached; check the connection and try again');
  }
  if (!response.ok) throw await errorFrom(response);
  return (await response.json()) as T;
}

export const dashboardApi = {
  signIn: (email: string, password: string) => call<{ user: SessionInfo['user'] }>('POST', '/dashboard/session', { email, password }),
  signOut: () => call<{ ok: true }>('DELETE', '/dashboard/session'),
  /** Who is signed in: null when nobody is (an answer, not a 401 the console would log). */
  currentSession: async () => (await call<{ session: SessionInfo | null }>('GET', '/dashboard/session/current')).session,
  setPreferences: (target: Target) => call<{ preferences: Target }>('PUT', '/dashboard/session/preferences', target),
  token: (target: Target) => call<SessionToken>('POST', '/dashboard/session/token', target),
  setPassword: (link_token: string, password: string) => call<{ ok: true }>('POST', '/dashboard/password', { link_token, password }),
  /** "Sign in with SSO": where to send the browser (the organisation's provider), found by the e-mail's domain. */
  startSso: (email: string) => call<{ redirect_url: string }>('POST', '/dashboard/sso/start', { email }),
  /** The e-mail address a set-password link is for; null when the link is unknown, used or expired. */
  passwordLinkEmail: async (link_token: string) => (await call<{ email: string | null }>('POST', '/dashboard/password/link', { link_token })).email,
};
