// The one-time link's page: its token is in the fragment (never sent to a server by the
// browser, except in the bodies below). The page first asks whom the link is for (POST
// /dashboard/password/link, which does not use it) and names that e-mail address; once the
// password is set it signs the person in with it at once, or, should that fail, sends them to
// sign-in with the address filled in.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { dashboardApi } from '../../api/dashboard';
import { ErrorNote, Loading } from '../../components/notes';
import { navigate } from '../../router';
import { prefillSignIn } from './sign-in-page';

const minLength = 12;

type Link = { kind: 'checking' } | { kind: 'usable'; email: string } | { kind: 'unusable' } | { kind: 'error'; error: unknown };

function Card(props: { title: string; children: ComponentChildren }): JSX.Element {
  return (
    <main class="auth">
      <div class="card">
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </main>
  );
}

export function SetPassword(props: { onSignedIn: () => void }): JSX.Element {
  const [linkToken] = useState(() => decodeURIComponent(location.hash.slice(1)));
  const [link, setLink] = useState<Link>({ kind: 'checking' });
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  /** The password is set, but signing in with it did not work (why, in `error`). */
  const [done, setDone] = useState(false);

  useEffect(() => {
    if (!linkToken) return;
    dashboardApi.passwordLinkEmail(linkToken).then(
      (email) => setLink(email === null ? { kind: 'unusable' } : { kind: 'usable', email }),
      (e: unknown) => setLink({ kind: 'error', error: e }),
    );
  }, [linkToken]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (link.kind !== 'usable') return;
    if (password !== again) return setError(new Error('the two passwords differ'));
    setBusy(true);
    setError(undefined);
    try {
      await dashboardApi.setPassword(linkToken, password);
    } catch (e) {
      setError(e);
      setBusy(false);
      return;
    }
    // The link is spent: drop it from the address bar and history.
    history.replaceState(null, '', location.pathname);
    try {
      await dashboardApi.signIn(link.email, password);
      navigate('/', { replace: true });
      props.onSignedIn();
    } catch (e) {
      setError(e);
      setDone(true);
      setBusy(false);
    }
  };

  if (!linkToken) {
    return (
      <Card title="Set your password">
        <p class="note error" role="alert">
          This page needs the link you were given (it ends with <code>#…</code>). Ask an owner or admin for a new one.
        </p>
      </Card>
    );
  }
  if (done && link.kind === 'usable') {
    return (
      <Card title="Password set">
        <p data-testid="password-set">
          Sign in with <strong>{link.email}</strong> and the password you chose.
        </p>
        <ErrorNote error={error} prefix="Signing you in did not work" />
        <button
          class="primary"
          type="button"
          onClick={() => {
            prefillSignIn(link.email);
            navigate('/sign-in', { replace: true });
          }}
        >
          Go to sign-in
        </button>
      </Card>
    );
  }
  if (link.kind === 'checking') return <Loading what="the link" />;
  if (link.kind === 'error') {
    return (
      <Card title="Set your password">
        <ErrorNote error={link.error} prefix="The link could not be checked" />
      </Card>
    );
  }
  if (link.kind === 'unusable') {
    return (
      <Card title="Set your password">
        <p class="note error" role="alert">
          This link is unknown, already used or expired (links are valid 24 hours, once). Ask an owner or admin for a new one.
        </p>
      </Card>
    );
  }
  return (
    <main class="auth">
      <form class="card" onSubmit={submit} aria-labelledby="set-password-title">
        <h1 id="set-password-title">Set your password</h1>
        {/* The address this link is for: you sign in with it (and a password manager files the new password under it). */}
        <label>
          E-mail
          <input type="email" name="email" autoComplete="username" readOnly value={link.email} data-testid="set-password-email" />
        </label>
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
          Set password and sign in
        </button>
      </form>
    </main>
  );
}
