// API tokens of the chosen project and mode (DECISIONS.md §14): list, create with the scopes the
// signed-in role holds (the API refuses more), the new secret shown once, revoke.
import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import type { components, paths } from '../../api/schema';
import { ErrorNote, Loading } from '../../components/notes';
import { ConfirmButton } from '../../components/confirm';
import { CopyField, When } from '../../components/copy-field';
import type { Route } from '../../router';
import { useSession } from '../../session';
import '../access.css';

/** A token as listed; `created_by_user_id` is the member who made it in the dashboard (null: opsctl or another token). */
type TokenInfo = components['schemas']['TokenInfo'];
type Created = TokenInfo & { token: string };
type ScopeName = paths['/v1/tokens']['post']['requestBody']['content']['application/json']['scopes'][number];

/** SPEC.md §5's scope table, in words for the checkboxes. */
const scopeHelp: Record<string, string> = {
  'media:read': 'list and retrieve files',
  'media:write': 'upload and delete files',
  'logs:read': 'queries, live tail, datasets',
  'logs:write': 'ingest events, manage datasets',
  'cases:read': 'read cases',
  'cases:write': 'create and update cases',
  'apps:read': 'read apps',
  'apps:write': 'submit apps',
  'usage:read': 'read quota usage',
  'members:read': 'list organisation members',
  'members:write': 'invite, change and remove members',
  'billing:read': 'read billing and plan',
  'tokens:write': 'create, list and revoke tokens',
  'monitors:read': 'read monitors, channels and deliveries',
  'monitors:write': 'create, change and test monitors and channels',
};

const day = 86_400_000;
const expiryChoices = [
  { value: 'never', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
  { value: 'date', label: 'On a date…' },
] as const;

export function TokensPage(_props: { route: Route }): JSX.Element {
  const session = useSession();
  const { target, membership } = session;
  const manage = session.can('tokens:write');
  const [created, setCreated] = useState<Created>();
  const [reload, setReload] = useState(0);

  return (
    <section class="tokens-page">
      <h1>Tokens</h1>
      <p class="muted">
        API tokens of this project in <strong>{target.mode}</strong> mode: a client sends one as <code>Authorization: Bearer …</code> to call the API with its scopes. Switch the
        mode above to see the other mode's tokens.
      </p>
      {!manage ? (
        <p class="note" data-testid="tokens-read-only">
          Your role ({membership.role}) cannot list, create or revoke API tokens: that needs the <code>tokens:write</code> scope, which Owners, Admins and Developers
          hold. Ask one of them for a token.
        </p>
      ) : (
        <>
          {!['Owner', 'Admin'].includes(membership.role) && <p class="note muted small">As a {membership.role} you see and revoke only the tokens you created here.</p>}
          {created ? (
            <NewSecret created={created} onDone={() => setCreated(undefined)} />
          ) : (
            <CreateToken
              onCreated={(token) => {
                setCreated(token);
                setReload((n) => n + 1);
              }}
            />
          )}
          <TokenList reload={reload} />
        </>
      )}
    </section>
  );
}

/** The new token, once: it is stored only as a hash. */
function NewSecret(props: { created: Created; onDone: () => void }): JSX.Element {
  const { created } = props;
  const { target } = useSession();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [created]);
  return (
    <div class="panel secret" role="region" aria-label="New token" data-testid="new-token">
      <h2 ref={heading} tabIndex={-1}>
        Token “{created.name}” created
      </h2>
      <p class="note warn">
        <strong>Copy it now: you will not see it again.</strong> Only a hash of it is kept, so nobody can show it to you later; if it is lost, revoke it and create another.
      </p>
      {created.mode !== target.mode && (
        <p class="small">
          It is a {created.mode}-mode token: it is listed when the mode above is {created.mode}.
        </p>
      )}
      <CopyField label={`Token (${created.mode} mode, ${created.scopes.length} scope${created.scopes.length === 1 ? '' : 's'})`} value={created.token} testId="token-secret" />
      <div class="row end">
        <button type="button" class="primary" onClick={props.onDone}>
          I have copied it
        </button>
      </div>
    </div>
  );
}

function CreateToken(props: { onCreated: (token: Created) => void }): JSX.Element {
  const { scopes, target } = useSession();
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
      const token = await data(
        api.POST('/v1/tokens', {
          // The order of the checkboxes, not of the clicks.
          body: { name: name.trim(), scopes: scopes.filter((s) => chosen.has(s)) as ScopeName[], mode, expires_at },
        }),
      );
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

function TokenList(props: { reload: number }): JSX.Element {
  const { target, info } = useSession();
  const [rows, setRows] = useState<TokenInfo[]>();
  const [cursor, setCursor] = useState('');
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const [names, setNames] = useState<Record<string, string>>({});

  const load = useCallback(
    async (after?: string) => {
      setBusy(true);
      setError(undefined);
      try {
        const page = await data(api.GET('/v1/tokens', { params: { query: after ? { cursor: after } : {} } }));
        setRows((before) => (after ? [...(before ?? []), ...page.tokens] : page.tokens));
        setCursor(page.has_more ? page.next_cursor : '');
      } catch (e) {
        setError(e);
      } finally {
        setBusy(false);
      }
    },
    [target],
  );
  useEffect(() => {
    void load();
  }, [load, props.reload]);

  const owned = rows?.some((t) => t.created_by_user_id) ?? false;
  // Creators' names from the member list (members:read, which every role holds).
  useEffect(() => {
    if (!owned) return;
    void (async () => {
      try {
        const found: Record<string, string> = {};
        let next = '';
        do {
          const page = await data(api.GET('/v1/orgs/{orgId}/members', { params: { path: { orgId: target.org_id }, query: { limit: 100, ...(next ? { cursor: next } : {}) } } }));
          for (const m of page.members) found[m.id] = m.name || m.email;
          next = page.nextCursor;
        } while (next);
        setNames(found);
      } catch {
        // Names are a convenience: the ids stay.
      }
    })();
  }, [owned, target.org_id]);

  const revoke = async (token: TokenInfo) => {
    await data(api.DELETE('/v1/tokens/{id}', { params: { path: { id: token.id } } }));
    setRows((before) => before?.filter((t) => t.id !== token.id));
    setNotice(`Token “${token.name}” revoked: requests with it are refused from now on.`);
  };

  const creator = (t: TokenInfo) => {
    if (!t.created_by_user_id) return <span class="muted">opsctl or API</span>;
    if (t.created_by_user_id === info.user.id) return <span>you</span>;
    return <span title={t.created_by_user_id}>{names[t.created_by_user_id] ?? t.created_by_user_id}</span>;
  };

  return (
    <div>
      <h2>Active tokens</h2>
      <p class="note ok small" role="status">
        {notice}
      </p>
      <ErrorNote error={error} />
      {rows === undefined ? (
        !error && <Loading what="tokens" />
      ) : rows.length === 0 ? (
        <p class="muted">No active tokens in {target.mode} mode yet.</p>
      ) : (
        <div class="table-wrap">
          <table data-testid="tokens-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Scopes</th>
                <th scope="col" class="wide">
                  Mode
                </th>
                <th scope="col">Created by</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((t) => (
                <tr key={t.id} data-token-id={t.id}>
                  <td>
                    <strong>{t.name}</strong>
                    <div class="muted small mono" title="the token's last four characters">
                      …{t.last_four} · created <When iso={t.created_at} />
                    </div>
                  </td>
                  <td>
                    <ul class="chips" aria-label={`Scopes of ${t.name}`}>
                      {t.scopes.map((s) => (
                        <li key={s}>
                          <code>{s}</code>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td class="wide">{t.mode}</td>
                  <td>{creator(t)}</td>
                  <td>
                    <When iso={t.last_used_at} empty="never" />
                  </td>
                  <td>
                    <When iso={t.expires_at} empty="never" />
                    {t.expires_at && Date.parse(t.expires_at) <= Date.now() && <span class="note error small"> (expired)</span>}
                  </td>
                  <td>
                    <ConfirmButton
                      label="Revoke"
                      title={`Revoke the token “${t.name}”?`}
                      confirmLabel="Revoke token"
                      danger
                      testId={`revoke-${t.id}`}
                      action={() => revoke(t)}
                    >
                      <p>
                        Every client that uses the token ending in <code>…{t.last_four}</code> is refused (401 unauthorized) from its next request. This cannot be undone:
                        a revoked token never works again.
                      </p>
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <button type="button" disabled={busy} onClick={() => void load(cursor)}>
          Load more
        </button>
      )}
    </div>
  );
}
