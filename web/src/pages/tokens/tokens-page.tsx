// API tokens of the chosen project and mode (DECISIONS.md §14): list, create with the scopes the
// signed-in role holds (the API refuses more), the new secret shown once, revoke. Requests:
// use-tokens.ts (the list, creators' names), use-token-writes.ts (create, revoke).
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { CopyField } from '../../components/copy-field';
import type { Route } from '../../router';
import { useSession } from '../../session';
import { CreateToken } from './create-token';
import { TokenList } from './token-list';
import type { Created } from './token-rules';
import { useTokens } from './use-tokens';
import '../access.css';

export function TokensPage(_props: { route: Route }): JSX.Element {
  const session = useSession();
  const { target, membership } = session;
  const manage = session.can('tokens:write');
  const [created, setCreated] = useState<Created>();
  // A role without tokens:write lists nothing (the API would refuse it).
  const list = useTokens(manage ? `${target.org_id}/${target.project_id}/${target.mode}` : '');

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
                list.reload();
              }}
            />
          )}
          <TokenList list={list} />
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
