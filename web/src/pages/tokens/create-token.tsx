// Create a token (POST /v1/tokens): name, mode, expiry and the scopes of the session's role.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote } from '../../components/notes';
import { useSession } from '../../session';
import { day, expiryChoices, scopeHelp, type Created, type ScopeName } from './token-rules';
import { useCreateToken } from './use-token-writes';

export function CreateToken(props: { onCreated: (token: Created) => void }): JSX.Element {
  const { scopes, target } = useSession();
  const createToken = useCreateToken();
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [mode, setMode] = useState(target.mode);
  const [expiry, setExpiry] = useState<(typeof expiryChoices)[number]['value']>('never');
  const [date, setDate] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => setMode(target.mode), [target.mode]);

  const toggle = (scope: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(scope);
    else next.delete(scope);
    setChosen(next);
  };
  const expiresAt = (): string | null => {
    if (expiry === 'never') return null;
    if (expiry === 'date') {
      // The end of that day, in the reader's time zone.
      const end = new Date(`${date}T23:59:59.999`);
      if (!date || Number.isNaN(end.getTime())) throw new Error('choose the day the token expires');
      if (end.getTime() <= Date.now()) throw new Error('the expiry day must be today or later');
      return end.toISOString();
    }
    return new Date(Date.now() + Number(expiry) * day).toISOString();
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      if (!name.trim()) throw new Error('give the token a name, so it can be told apart later');
      if (chosen.size === 0) throw new Error('choose at least one scope');
      const expires_at = expiresAt();
      setBusy(true);
      // The order of the checkboxes, not of the clicks.
      const token = await createToken({ name: name.trim(), scopes: scopes.filter((s) => chosen.has(s)) as ScopeName[], mode, expires_at });
      setName('');
      setChosen(new Set());
      setExpiry('never');
      setDate('');
      props.onCreated(token);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="create-token-title">
      <h2 id="create-token-title">Create a token</h2>
      <div class="form-grid">
        <label>
          Name
          <input name="name" required maxLength={100} value={name} placeholder="e.g. game server eu-1" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Token mode
          <select name="mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as typeof mode)}>
            {target.mode === 'live' && <option value="live">live: sees live data</option>}
            <option value="test">test: sees only test data</option>
          </select>
        </label>
        <label>
          Expires
          <select name="expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value as typeof expiry)}>
            {expiryChoices.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </label>
        {expiry === 'date' && (
          <label>
            Expiry day
            <input type="date" name="expiry-day" required value={date} min={new Date().toISOString().slice(0, 10)} onInput={(e) => setDate(e.currentTarget.value)} />
          </label>
        )}
      </div>
      <fieldset class="scopes">
        <legend>Scopes (only those your role holds can be given)</legend>
        {scopes.map((scope) => (
          <label key={scope} class="check">
            <input type="checkbox" name="scope" value={scope} checked={chosen.has(scope)} onChange={(e) => toggle(scope, e.currentTarget.checked)} />
            <span>
              <code>{scope}</code> <span class="muted small">{scopeHelp[scope] ?? ''}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <ErrorNote error={error} />
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          Create token
        </button>
      </div>
    </form>
  );
}
