// The Alerts page (/alerts): the project's monitors with their state, and its channels.
import type { JSX } from 'preact';
import { Loading, ErrorNote } from '../../components/notes';
import { When } from '../../components/copy-field';
import { Link } from '../../router';
import { useSession } from '../../session';
import { useMonitors } from './hooks/use-monitors';
import { useMonitorHistory } from './hooks/use-monitor-history';
import { ChannelsSection } from './channels';
import { MuteControl, StateBadge } from './state-badge';
import { conditionText, formatValue, isMuted, summarise, type Monitor } from './model';

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
                <th scope="col" class="wide">
                  Evaluation
                </th>
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
        The state is each group's last state change in the monitor's history (the API keeps no other state); the last value is the one that change was made on. A threshold
        monitor runs at its own <em>every</em> interval (the API does not publish when it runs next); a match monitor on every ingest.
      </p>
      <ChannelsSection write={write} />
    </section>
  );
}

function MonitorRow(props: { monitor: Monitor; write: boolean; onChanged: (m: Monitor) => void }): JSX.Element {
  const m = props.monitor;
  const history = useMonitorHistory(m.id, 50);
  const summary = history.items ? summarise(m, history.items) : undefined;
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
        <StateBadge monitor={m} summary={summary} />
        {history.error !== undefined && <ErrorNote error={history.error} />}
      </td>
      <td>
        {m.kind === 'threshold' ? (
          <span data-testid="last-value">
            {formatValue(summary?.lastValue)} <span class="muted small">{conditionText(m)}</span>
            {summary?.lastChangeAt && (
              <div class="muted small">
                at <When iso={summary.lastChangeAt} />
              </div>
            )}
          </span>
        ) : (
          <span class="muted small">
            last notified <When iso={summary?.lastNotifiedAt} empty="never" />
          </span>
        )}
      </td>
      <td class="wide small">{m.kind === 'threshold' ? `every ${m.every ?? '1m'} over ${m.window ?? ''}` : `on ingest, grouped ${m.group_window ?? '60s'}`}</td>
      {props.write && (
        <td>
          <MuteControl monitor={m} muted={isMuted(m)} onChanged={props.onChanged} />
        </td>
      )}
    </tr>
  );
}
