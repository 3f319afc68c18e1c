import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { dashboardApi } from '../../api/dashboard';
import { ApiError } from '../../api/errors';
import { ErrorNote } from '../../components/notes';

/** The address the next sign-in form starts with (the set-password page's, after a password is set). */
let prefilled = '';
export function prefillSignIn(email: string): void {
  prefilled = email;
}

/**
 * Why a single sign-on was refused: the callback sends the browser here with the reason in the
 * fragment (never sent to a server). Read once, then removed from the address bar.
 */
function takeSsoError(): Error | undefined {
  const match = /^#sso_error=(.*)$/.exec(location.hash);
  if (!match) return undefined;
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  try {
    return new Error(decodeURIComponent(match[1]!));
  } catch {
    return new Error('single sign-on refused');
  }
}

/** E-mail and password, or "Sign in with SSO" (e-mail only, then the organisation's provider); a throttled sign-in says when to try again. */
export function SignIn(props: { onSignedIn: () => void; notice?: string }): JSX.Element {
  const [ssoError] = useState(takeSsoError);
  // #sso: the "Sign in with SSO" link opened in a new tab.
  const [sso, setSso] = useState(() => ssoError !== undefined || location.hash === '#sso');
  const [email, setEmail] = useState(() => prefilled);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(ssoError);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await dashboardApi.signIn(email, password);
      props.onSignedIn();
    } catch (e) {
      if (e instanceof ApiError && e.status === 429 && e.retryAfterSeconds) {
        setError(new Error(`Too many sign-in attempts. Try again in ${Math.ceil(e.retryAfterSeconds / 60)} minute(s).`));
      } else setError(e);
      // Password sign-in refused because the organisation enforces single sign-on: offer it.
      if (e instanceof ApiError && e.details.sso_required === true) setSso(true);
    } finally {
      setBusy(false);
    }
  };
  const submitSso = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { redirect_url } = await dashboardApi.startSso(email.trim());
      location.assign(redirect_url);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  const switchTo = (next: boolean) => {
    setSso(next);
    setError(undefined);
  };
  if (sso) {
    return (
      <main class="auth">
        <form class="card" onSubmit={submitSso} aria-labelledby="sign-in-title">
          <h1 id="sign-in-title">Sign in with SSO</h1>
          <p class="muted small">Your work e-mail finds your organisation's identity provider.</p>
          <label>
            E-mail
            <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <ErrorNote error={error} />
          <button class="primary" type="submit" disabled={busy}>
            Continue with SSO
          </button>
          <button type="button" onClick={() => switchTo(false)}>
            Sign in with a password instead
          </button>
        </form>
      </main>
    );
  }
  return (
    <main class="auth">
      <form class="card" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to opsplatform</h1>
        {props.notice && <p class="note">{props.notice}</p>}
        <label>
          E-mail
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" name="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <ErrorNote error={error} />
        <button class="primary" type="submit" disabled={busy}>
          Sign in
        </button>
        {/* A link, not a second button: the form has one button, the password's. */}
        <a
          href="/dashboard/sign-in#sso"
          onClick={(event) => {
            event.preventDefault();
            switchTo(true);
          }}
        >
          Sign in with SSO
        </a>
        <p class="muted small">No password yet? Ask an owner or admin of your organisation for a set-password link.</p>
      </form>
    </main>
  );
}
