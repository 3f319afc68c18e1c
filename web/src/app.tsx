// The dashboard's shell: the session, the organisation / project / mode switcher, navigation,
// and one page at a time. Every page is a client of the public /v1 API (DECISIONS.md §17).
import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { dashboardApi, type SessionInfo, type Target } from './api/dashboard';
import { tokens } from './api/client';
import { ApiError } from './api/errors';
import { ErrorNote, Loading } from './components/notes';
import { Link, navigate, useRoute, type Route } from './router';
import { initialTarget, SessionProvider, type SessionState } from './session';
import { SignIn } from './pages/sign-in/sign-in-page';
import { SetPassword } from './pages/sign-in/set-password-page';
import { ExplorerPage } from './pages/explorer/explorer-page';
import { DatasetsPage } from './pages/datasets/datasets-page';
import { MediaPage } from './pages/media/media-page';
import { TokensPage } from './pages/tokens/tokens-page';
import { MembersPage } from './pages/members/members-page';
import { UsagePage } from './pages/usage/usage-page';
import { AlertsRoutes } from './pages/alerts';
import { SsoPage } from './pages/sso/sso-page';
import { AuditPage } from './pages/audit/audit-page';

interface Page {
  path: string;
  title: string;
  render: (route: Route) => JSX.Element;
}

const pages: Page[] = [
  { path: '/', title: 'Explorer', render: (route) => <ExplorerPage route={route} /> },
  { path: '/datasets', title: 'Datasets', render: (route) => <DatasetsPage route={route} /> },
  { path: '/media', title: 'Media', render: (route) => <MediaPage route={route} /> },
  { path: '/tokens', title: 'Tokens', render: (route) => <TokensPage route={route} /> },
  { path: '/members', title: 'Members', render: (route) => <MembersPage route={route} /> },
  { path: '/usage', title: 'Usage', render: (route) => <UsagePage route={route} /> },
  { path: '/alerts', title: 'Alerts', render: (route) => <AlertsRoutes route={route} /> },
  { path: '/sso', title: 'SSO', render: (route) => <SsoPage route={route} /> },
  { path: '/audit', title: 'Audit', render: (route) => <AuditPage route={route} /> },
];

/** Pages shown in the navigation for a role: single sign-on is the Owners'. */
const visibleTo = (role: string) => (p: Page) => p.path !== '/sso' || role === 'Owner';

function pageOf(path: string): Page | undefined {
  if (path === '/') return pages[0];
  return pages.find((p) => p.path !== '/' && (path === p.path || path.startsWith(`${p.path}/`)));
}

type Phase = { kind: 'loading' } | { kind: 'signed-out'; notice?: string } | { kind: 'error'; error: unknown } | { kind: 'ready'; state: Omit<SessionState, 'switchTo' | 'signOut'> };

export function App(): JSX.Element {
  const route = useRoute();
  const [phase, setPhase] = useState<Phase>({ kind: 'loading' });

  const load = useCallback(async (wanted?: Target) => {
    try {
      const info: SessionInfo | null = await dashboardApi.currentSession();
      if (!info) return setPhase({ kind: 'signed-out' });
      const target = wanted ?? initialTarget(info);
      const membership = info.memberships.find((m) => m.org_id === target?.org_id);
      if (!target || !membership) return setPhase({ kind: 'error', error: new Error('you are not a member of any organisation with a project') });
      tokens.setTarget(target);
      const token = await tokens.token();
      setPhase({ kind: 'ready', state: { info, target, membership, scopes: token.scopes } });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) setPhase({ kind: 'signed-out' });
      else setPhase({ kind: 'error', error });
    }
  }, []);

  useEffect(() => {
    tokens.onSignedOut = () => setPhase({ kind: 'signed-out', notice: 'Your session has ended; sign in again.' });
  }, []);
  // The session is looked up once the page is not the set-password page (whose link may be for
  // someone else than a signed-in user), also when that page sends the reader on to sign-in.
  const started = useRef(false);
  useEffect(() => {
    if (started.current || route.path === '/set-password') return;
    started.current = true;
    void load();
  }, [route.path]);

  if (route.path === '/set-password') {
    return (
      <SetPassword
        onSignedIn={() => {
          // It has navigated on (to the explorer): the session is looked up once, here.
          started.current = true;
          setPhase({ kind: 'loading' });
          void load();
        }}
      />
    );
  }
  if (phase.kind === 'loading') return <Loading what="the dashboard" />;
  if (phase.kind === 'signed-out') {
    // The page's query goes along (an explorer link's `q`, a monitor form's): after signing in the
    // person lands on what they opened, not on its bare path.
    const query = route.query.toString();
    if (route.path !== '/sign-in') history.replaceState(null, '', `/dashboard/sign-in?next=${encodeURIComponent(query ? `${route.path}?${query}` : route.path)}`);
    return (
      <SignIn
        notice={phase.notice}
        onSignedIn={() => {
          const next = new URLSearchParams(location.search).get('next');
          navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
          setPhase({ kind: 'loading' });
          void load();
        }}
      />
    );
  }
  if (phase.kind === 'error') {
    return (
      <main class="auth">
        <div class="card">
          <h1>The dashboard could not start</h1>
          <ErrorNote error={phase.error} />
          <button type="button" onClick={() => void load()}>
            Try again
          </button>
        </div>
      </main>
    );
  }

  const state: SessionState = {
    ...phase.state,
    switchTo: async (target) => {
      await dashboardApi.setPreferences(target);
      await load(target);
    },
    signOut: async () => {
      await dashboardApi.signOut().catch(() => undefined);
      tokens.setTarget(undefined);
      setPhase({ kind: 'signed-out', notice: 'You are signed out.' });
    },
  };
  if (route.path === '/sign-in') navigate('/', { replace: true });
  const page = pageOf(route.path);
  return (
    <SessionProvider value={state}>
      <Shell state={state} current={page}>
        {page ? page.render(route) : <NotFound />}
      </Shell>
    </SessionProvider>
  );
}

function NotFound(): JSX.Element {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        <Link href="/">Go to the explorer</Link>
      </p>
    </section>
  );
}

function Shell(props: { state: SessionState; current: Page | undefined; children: JSX.Element }): JSX.Element {
  const { state } = props;
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    document.title = `${props.current?.title ?? 'Not found'} · opsplatform`;
    setMenuOpen(false);
  }, [props.current]);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">opsplatform</span>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Pages">
          {pages.filter(visibleTo(state.membership.role)).map((p) => (
            <Link key={p.path} href={p.path} aria-current={props.current === p ? 'page' : undefined}>
              {p.title}
            </Link>
          ))}
        </nav>
        <Switcher state={state} />
        <span class="user muted" title={state.info.user.email}>
          {state.info.user.name || state.info.user.email} · {state.membership.role}
        </span>
        <button type="button" data-testid="sign-out" onClick={() => void state.signOut()}>
          Sign out
        </button>
      </header>
      {state.target.mode === 'test' && <div class="mode-banner">Test mode: you see the project's test data.</div>}
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}

/** Organisation, project and mode; the choice persists per user (PUT /dashboard/session/preferences). */
function Switcher(props: { state: SessionState }): JSX.Element {
  const { info, target } = props.state;
  const [error, setError] = useState<unknown>();
  const choose = (next: Target) => props.state.switchTo(next).catch(setError);
  const org = info.memberships.find((m) => m.org_id === target.org_id);
  return (
    <div class="switcher">
      <label>
        <span class="sr-only">Organisation</span>
        <select
          aria-label="Organisation"
          value={target.org_id}
          onChange={(e) => {
            const m = info.memberships.find((x) => x.org_id === e.currentTarget.value);
            const project = m?.projects[0];
            if (m && project) void choose({ org_id: m.org_id, project_id: project.project_id, mode: target.mode });
          }}
        >
          {info.memberships.map((m) => (
            <option key={m.org_id} value={m.org_id}>
              {m.org_name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span class="sr-only">Project</span>
        <select aria-label="Project" value={target.project_id} onChange={(e) => void choose({ ...target, project_id: e.currentTarget.value })}>
          {org?.projects.map((p) => (
            <option key={p.project_id} value={p.project_id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span class="sr-only">Mode</span>
        <select aria-label="Mode" value={target.mode} onChange={(e) => void choose({ ...target, mode: e.currentTarget.value as Target['mode'] })}>
          <option value="live">live</option>
          <option value="test">test</option>
        </select>
      </label>
      <ErrorNote error={error} />
    </div>
  );
}
