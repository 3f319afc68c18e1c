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

/** E-mail and password; a throttled sign-in says when to try again. */
export function SignIn(props: { onSignedIn: () => void; notice?: string }): JSX.Element {
  const [email, setEmail] = useState(() => prefilled);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
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
    } finally {
      setBusy(false);
    }
  };
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
        <p class="muted small">No password yet? Ask an owner or admin of your organisation for a set-password link.</p>
      </form>
    </main>
  );
}
