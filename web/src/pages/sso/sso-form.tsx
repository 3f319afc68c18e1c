// The configuration form: PUT /v1/orgs/{orgId}/sso. The secret field is empty on a change (the
// stored secret is kept unless a new one is typed); a refusal is shown beside its field.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../../api/errors';
import { ErrorNote } from '../../components/notes';
import type { SsoConfig } from './use-sso-config';
import { useSaveSso } from './use-sso-writes';

export function SsoForm(props: { config: SsoConfig | null; roles: string[]; onSaved: (config: SsoConfig) => void }): JSX.Element {
  const save = useSaveSso();
  const [issuer, setIssuer] = useState(props.config?.issuer ?? '');
  const [clientId, setClientId] = useState(props.config?.client_id ?? '');
  const [secret, setSecret] = useState('');
  const [domains, setDomains] = useState(props.config?.email_domains.map((d) => d.domain).join(', ') ?? '');
  const [role, setRole] = useState(props.config?.default_role ?? 'Developer');
  const [enforce, setEnforce] = useState(props.config?.enforce ?? false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const field = error instanceof ApiError && typeof error.details.field === 'string' ? error.details.field : undefined;
  const errorFor = (name: string) => (field === name ? <ErrorNote error={error} /> : null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const saved = await save({
        issuer: issuer.trim(),
        client_id: clientId.trim(),
        ...(secret ? { client_secret: secret } : {}),
        email_domains: domains.split(/[\s,]+/).filter(Boolean),
        default_role: role,
        enforce,
      });
      setSecret('');
      props.onSaved(saved);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="sso-form-title">
      <h2 id="sso-form-title">{props.config ? 'Change the configuration' : 'Configure single sign-on'}</h2>
      <div class="form-grid">
        <label>
          Issuer
          <input name="issuer" type="url" required maxLength={500} placeholder="https://accounts.google.com" value={issuer} onInput={(e) => setIssuer(e.currentTarget.value)} />
        </label>
        {errorFor('issuer')}
        <label>
          Client ID
          <input name="client_id" required maxLength={500} autoComplete="off" value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} />
        </label>
        {errorFor('client_id')}
        <label>
          Client secret
          <input
            name="client_secret"
            type="password"
            required={!props.config}
            maxLength={2000}
            autoComplete="new-password"
            placeholder={props.config ? 'unchanged' : ''}
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
        </label>
        {errorFor('client_secret')}
        <label>
          E-mail domains
          <input name="email_domains" required placeholder="studio.example" value={domains} onInput={(e) => setDomains(e.currentTarget.value)} />
        </label>
        {errorFor('email_domains')}
        <label>
          Role of new members
          <select name="default_role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            {props.roles.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        {errorFor('default_role')}
      </div>
      <label class="check">
        <input type="checkbox" name="enforce" checked={enforce} onChange={(e) => setEnforce(e.currentTarget.checked)} />
        Require single sign-on: members cannot sign in with a password (the primary owner still can)
      </label>
      {!field && <ErrorNote error={error} />}
      <div class="row">
        <button class="primary" type="submit" disabled={busy}>
          Save
        </button>
      </div>
    </form>
  );
}
