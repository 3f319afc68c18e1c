// The audit log's entries, newest first: when, what, who, about what, and the outcome; each opens
// on its details (request id, client address, user agent, project and mode, what changed).
import type { JSX } from 'preact';
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { PagedList } from '../../api/use-paged-list';
import { When } from '../../components/copy-field';
import { ErrorNote, Loading } from '../../components/notes';
import type { AuditEntry } from './use-audit';

const actorKinds: Record<AuditEntry['actor']['type'], string> = { user: 'member', token: 'API token', operator: 'opsctl' };

export function AuditList(props: { list: PagedList<AuditEntry>; onFilter: (name: 'actor' | 'target_id', value: string) => void }): JSX.Element {
  const { list } = props;
  const rows = list.items;
  const [open, setOpen] = useState<string>();
  return (
    <div>
      <ErrorNote error={list.error} />
      {rows === undefined ? (
        !list.error && <Loading what="the audit log" />
      ) : rows.length === 0 ? (
        <p class="muted" data-testid="audit-empty">
          No entries match.
        </p>
      ) : (
        <div class="table-wrap">
          <table data-testid="audit-table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Action</th>
                <th scope="col">Actor</th>
                <th scope="col" class="wide">
                  Target
                </th>
                <th scope="col" class="wide">
                  Outcome
                </th>
                <th scope="col">
                  <span class="sr-only">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <Fragment key={e.id}>
                  <tr data-entry-id={e.id} class={e.outcome === 'failure' ? 'failure' : undefined}>
                    <td>
                      <When iso={e.ts} />
                    </td>
                    <td>
                      <code>{e.action}</code>
                      {e.outcome === 'failure' && <span class="note error small"> refused</span>}
                    </td>
                    <td>
                      <button type="button" class="link" title={`Only ${e.actor.id}'s entries`} onClick={() => props.onFilter('actor', e.actor.id)}>
                        {e.actor.name || e.actor.id}
                      </button>
                      <div class="muted small">{actorKinds[e.actor.type]}</div>
                    </td>
                    <td class="wide mono small">
                      <button type="button" class="link" title={`Only entries about ${e.target.id}`} onClick={() => props.onFilter('target_id', e.target.id)}>
                        {e.target.type} {e.target.id}
                      </button>
                    </td>
                    <td class="wide">{e.outcome}</td>
                    <td>
                      <button type="button" aria-expanded={open === e.id} aria-controls={`audit-${e.id}`} onClick={() => setOpen(open === e.id ? undefined : e.id)}>
                        Details
                      </button>
                    </td>
                  </tr>
                  {open === e.id && (
                    <tr class="details">
                      <td colSpan={6} id={`audit-${e.id}`}>
                        <EntryDetails entry={e} />
                      </td>
                    </tr>
                  )}
                </Fragment>
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

function EntryDetails(props: { entry: AuditEntry }): JSX.Element {
  const e = props.entry;
  const facts: Array<[string, string]> = [
    ['Entry', e.id],
    ['Target', `${e.target.type} ${e.target.id}`],
    ['Actor', `${actorKinds[e.actor.type]} ${e.actor.id}${e.actor.name ? ` (${e.actor.name})` : ''}`],
    ['Outcome', e.outcome],
    ['Request id', e.request_id],
    ['Client address', e.ip || '–'],
    ['User agent', e.user_agent || '–'],
    ['Project', e.project_id ? `${e.project_id} (${e.mode ?? ''})` : 'the whole organisation'],
  ];
  return (
    <div class="audit-details" data-testid="audit-details">
      <dl>
        {facts.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{name}</dt>
            <dd class="mono">{value}</dd>
          </Fragment>
        ))}
      </dl>
      <h3 class="small">What changed</h3>
      <pre class="mono small">{JSON.stringify(e.details, null, 2)}</pre>
    </div>
  );
}
