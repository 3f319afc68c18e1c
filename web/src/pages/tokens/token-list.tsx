// The project and mode's active tokens (a Developer's own only, as the API lists them), with who
// created each and Revoke behind a dialog.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { PagedList } from '../../api/use-paged-list';
import { ConfirmButton } from '../../components/confirm';
import { When } from '../../components/copy-field';
import { ErrorNote, Loading } from '../../components/notes';
import { useSession } from '../../session';
import type { TokenInfo } from './token-rules';
import { useMemberNames } from './use-tokens';
import { useRevokeToken } from './use-token-writes';

export function TokenList(props: { list: PagedList<TokenInfo> }): JSX.Element {
  const { target, info } = useSession();
  const { list } = props;
  const rows = list.items;
  const error = list.error;
  const [notice, setNotice] = useState('');
  const names = useMemberNames(target.org_id, rows?.some((t) => t.created_by_user_id) ?? false);
  const revokeToken = useRevokeToken();

  const revoke = async (token: TokenInfo) => {
    await revokeToken(token.id);
    list.update((before) => before.filter((t) => t.id !== token.id));
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
      {list.hasMore && (
        <button type="button" disabled={list.loading} onClick={list.loadMore}>
          Load more
        </button>
      )}
    </div>
  );
}
