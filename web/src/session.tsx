// Who is signed in, and for which organisation, project and mode the pages work: the choice is
// stored per user on the server (PUT /dashboard/session/preferences), so it follows them.
import { createContext, type ComponentChildren, type JSX } from 'preact';
import { useContext, useMemo } from 'preact/hooks';
import type { Membership, SessionInfo, Target } from './api/dashboard';

export interface SessionState {
  info: SessionInfo;
  target: Target;
  membership: Membership;
  /** Scopes of the session's token for the target: what the pages may offer. */
  scopes: string[];
  switchTo(target: Target): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionState | undefined>(undefined);

export function SessionProvider(props: { value: SessionState; children: ComponentChildren }): JSX.Element {
  return <SessionContext.Provider value={props.value}>{props.children}</SessionContext.Provider>;
}

export function useSession(): SessionState & { can(scope: string): boolean } {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside a signed-in page');
  return useMemo(() => ({ ...state, can: (scope: string) => state.scopes.includes(scope) }), [state]);
}

/** The target to start with: the stored preference, else the first project of the first organisation. */
export function initialTarget(info: SessionInfo): Target | undefined {
  if (info.preferences) return info.preferences;
  for (const m of info.memberships) {
    const project = m.projects[0];
    if (project) return { org_id: m.org_id, project_id: project.project_id, mode: 'live' };
  }
  return undefined;
}
