import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { dashboardApi } from '../api/dashboard';
import { ErrorNote } from '../components/notes';
import { navigate } from '../router';

const minLength = 12;

/** The one-time link's page: its token is in the fragment (never sent to a server by the browser). */
export function SetPassword(): JSX.Element {
  const [linkToken] = useState(() => decodeURIComponent(location.hash.slice(1)));
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (password !== again) return setError(new Error('the two passwords differ'));
    setBusy(true);
    setError(undefined);
    try {
      await dashboardApi.setPassword(linkToken, password);
      // The link is spent: drop it from the address bar and history.
      history.replaceState(null, '', location.pathname);
      setDone(true);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  if (!linkToken) {
    return (
      <main class="auth">
        <div class="card">
          <h1>Set your password</h1>
          <p class="note error" role="alert">
            This page needs the link you were given (it ends with <code>#…</code>). Ask an owner or admin for a new one.
          </p>
        </div>
      </main>
    );
  }
  if (done) {
    return (
      <main class="auth">
        <div class="card">
          <h1>Password set</h1>
          <p>You can now sign in with your e-mail address and this password.</p>
          <button class="primary" type="button" onClick={() => navigate('/sign-in', { replace: true })}>
            Go to sign-in
          </button>
        </div>
      </main>
    );
  }
  return (
    <main class="auth">
      <form class="card" onSubmit={submit} aria-labelledby="set-password-title">
        <h1 id="set-password-title">Set your password</h1>
        <label>
          New password (at least {minLength} characters)
          <input type="password" name="password" autoComplete="new-password" minLength={minLength} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <label>
          The same again
          <input type="password" name="again" autoComplete="new-password" minLength={minLength} required value={again} onInput={(e) => setAgain(e.currentTarget.value)} />
        </label>
        <ErrorNote error={error} />
        <button class="primary" type="submit" disabled={busy}>
          Set password
        </button>
      </form>
    </main>
  );
}
