// The Alerts page (/alerts): the project's monitors with their state, and its channels.
import type { JSX } from 'preact';
import { Loading, ErrorNote } from '../../components/notes';
import { When } from '../../components/copy-field';
import { Link } from '../../router';
import { useSession } from '../../session';
import { useMonitors } from './hooks/use-monitors';
import { ChannelsSection } from './channels';
import { MuteControl, StateBadge } from './state-badge';
import { RelativeTime } from './relative-time';
import { conditionText, formatValue, isMuted, type Monitor } from './model';

export function AlertsPage(): JSX.Element {
  const session = useSession();
  const write = session.can('monitors:write');
  const monitors = useMonitors();
  return (
    <section class="alerts-page">
      <div class="page-head">
        <h1>Alerts</h1>
        {write && (
          <Link href="/alerts/new" class="button primary" data-testid="new-monitor">
            New monitor
          </Link>
        )}
      </div>
      <p class="muted">
        Monitors of this project in <strong>{session.target.mode}</strong> mode: a <em>threshold</em> monitor runs a <code>stats</code> query on a schedule and notifies when a
        group's number crosses its condition; a <em>match</em> monitor notifies events as they are ingested.
        {!write && ` Your role (${session.membership.role}) can read them; Owners, Admins and Developers create and change them.`}
      </p>
      <h2>Monitors</h2>
      <ErrorNote error={monitors.error} />
      {monitors.items === undefined ? (
        !monitors.error && <Loading what="monitors" />
      ) : monitors.items.length === 0 ? (
        <p class="muted" data-testid="no-monitors">
          No monitors in {session.target.mode} mode yet.{write && ' Create one here, or from a query in the explorer.'}
        </p>
      ) : (
        <div class="table-wrap">
          <table data-testid="monitors-table">
            <thead>
              <tr>
                <th scope="col">Monitor</th>
                <th scope="col">State</th>
                <th scope="col">Last value</th>
                <th scope="col">Next evaluation</th>
                {write && (
                  <th scope="col">
                    <span class="sr-only">Mute</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {monitors.items.map((m) => (
                <MonitorRow key={m.id} monitor={m} write={write} onChanged={(next) => monitors.update((all) => all.map((x) => (x.id === next.id ? next : x)))} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {monitors.hasMore && (
        <button type="button" disabled={monitors.loading} onClick={monitors.loadMore}>
          Load more
        </button>
      )}
      <p class="muted small">
        A threshold monitor's state is the worst of its groups' (firing, pending, no data, ok) at its last evaluation, and the last value its group's nearest to firing; it is
        evaluated every <em>every</em>. A match monitor watches every ingest and notifies each match. The list is read again every 15 s.
      </p>
      <ChannelsSection write={write} />
    </section>
  );
}

function MonitorRow(props: { monitor: Monitor; write: boolean; onChanged: (m: Monitor) => void }): JSX.Element {
  const m = props.monitor;
  const { status } = m;
  return (
    <tr data-monitor-id={m.id}>
      <td>
        <Link href={`/alerts/${m.id}`}>
          <strong>{m.name}</strong>
        </Link>
        <div class="muted small">
          {m.kind} · <code class="query">{m.q}</code>
        </div>
      </td>
      <td>
        <StateBadge monitor={m} />
      </td>
      <td>
        {m.kind === 'threshold' ? (
          <>
            <span data-testid="last-value">
              {formatValue(status.last_evaluated_at === null ? undefined : status.last_value)} <span class="muted small">{conditionText(m)}</span>
            </span>
            {status.last_evaluated_at && (
              <div class="muted small">
                evaluated <RelativeTime iso={status.last_evaluated_at} />
              </div>
            )}
          </>
        ) : (
          <>
            <div class="muted small" data-testid="last-match">
              last match <When iso={status.last_match_at} empty="never" />
            </div>
            <div class="muted small">
              last notified <When iso={status.last_notified_at} empty="never" />
            </div>
          </>
        )}
      </td>
      <td class="small">
        {m.kind === 'threshold' ? (
          <>
            <RelativeTime iso={status.next_evaluation_at} due testId="next-evaluation" />
            <div class="muted wide">
              every {m.every ?? '1m'} over {m.window ?? ''}
            </div>
          </>
        ) : (
          <span class="muted" data-testid="next-evaluation">
            on ingest<span class="wide">, grouped {m.group_window ?? '60s'}</span>
          </span>
        )}
      </td>
      {props.write && (
        <td>
          <MuteControl monitor={m} muted={isMuted(m)} onChanged={props.onChanged} />
        </td>
      )}
    </tr>
  );
}
