// A monitor (/alerts/{id}): its settings and state, mute, "Send test notification", edit,
// delete (after a confirmation), and its history.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ConfirmButton } from '../../components/confirm';
import { When } from '../../components/copy-field';
import { ErrorNote, Loading } from '../../components/notes';
import { Link, navigate } from '../../router';
import { useSession } from '../../session';
import { useChannels } from './hooks/use-channels';
import { useMonitor } from './hooks/use-monitor';
import { useMonitorHistory } from './hooks/use-monitor-history';
import { HistoryList } from './history-list';
import { MuteControl, StateBadge } from './state-badge';
import { deleteMonitor, testMonitor } from './mutations';
import { RelativeTime } from './relative-time';
import { conditionText, formatValue, groupText, isMuted, openGroups } from './model';

export function MonitorPage(props: { id: string }): JSX.Element {
  const write = useSession().can('monitors:write');
  const { monitor, error, set } = useMonitor(props.id);
  const history = useMonitorHistory(props.id, 50);
  const channels = useChannels();
  const [notice, setNotice] = useState('');
  const [testError, setTestError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  // While a notification is pending (a test just sent, a retry due), look again every 1.5 s.
  const pending = history.items?.some((h) => h.type === 'notification' && h.delivery.state === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(history.reload, 1500);
    return () => clearTimeout(timer);
  }, [history.items]);

  if (error) return <ErrorNote error={error} />;
  if (!monitor) return <Loading what="the monitor" />;
  const groups = history.items ? openGroups(history.items) : [];
  const { status } = monitor;
  const channelNames = monitor.channel_ids.map((id) => channels.items?.find((c) => c.id === id)?.name ?? id);

  const sendTest = async () => {
    setBusy(true);
    setTestError(undefined);
    setNotice('');
    try {
      const sent = await testMonitor(monitor.id);
      setNotice(
        sent.deliveries.length === 0
          ? 'The monitor has no channel to send to: edit it to choose one.'
          : `Test notification stored for ${sent.deliveries.length} channel${sent.deliveries.length === 1 ? '' : 's'}; its attempts appear in the history below.`,
      );
      history.reload();
    } catch (e) {
      setTestError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="alerts-page monitor-page">
      <p class="small">
        <Link href="/alerts">← Alerts</Link>
      </p>
      <div class="page-head">
        <h1>{monitor.name}</h1>
        <StateBadge monitor={monitor} />
      </div>
      <dl class="facts">
        <dt>Kind</dt>
        <dd>{monitor.kind}</dd>
        <dt>Query</dt>
        <dd>
          <code class="query">{monitor.q}</code>
        </dd>
        {monitor.kind === 'threshold' ? (
          <>
            <dt>Condition</dt>
            <dd>
              value {conditionText(monitor)} over the last {monitor.window}, evaluated every {monitor.every}; pending {monitor.for} before firing; without data{' '}
              {monitor.no_data}; repeated every {monitor.repeat} while firing{monitor.notify_on_resolve ? '; resolve notified' : ''}
            </dd>
            <dt>Last value</dt>
            <dd data-testid="last-value">
              {formatValue(status.last_evaluated_at === null ? undefined : status.last_value)}
              {status.last_evaluated_at ? (
                <span class="muted small">
                  {' '}
                  (evaluated <When iso={status.last_evaluated_at} />
                  {status.groups_firing > 0 && `; ${status.groups_firing} group${status.groups_firing === 1 ? '' : 's'} firing`})
                </span>
              ) : (
                <span class="muted small"> (not evaluated yet)</span>
              )}
            </dd>
            <dt>Next evaluation</dt>
            <dd>
              <RelativeTime iso={status.next_evaluation_at} due testId="next-evaluation" />
            </dd>
            {groups.length > 0 && (
              <>
                <dt>Firing or pending</dt>
                <dd>{groups.map((g) => `${groupText(g.group)}: ${g.state} (${formatValue(g.value)})`).join('; ')}</dd>
              </>
            )}
          </>
        ) : (
          <>
            <dt>Grouping</dt>
            <dd>matches within {monitor.group_window} go out together</dd>
          </>
        )}
        <dt>Last match</dt>
        <dd data-testid="last-match">
          <When iso={status.last_match_at} empty="never" />
          <span class="muted small">{monitor.kind === 'threshold' ? ' (the last evaluation whose condition held)' : ' (the latest matching event, as of its last notification)'}</span>
        </dd>
        <dt>Last notified</dt>
        <dd>
          <When iso={status.last_notified_at} empty="never" />
        </dd>
        <dt>Channels</dt>
        <dd>{channelNames.length ? channelNames.join(', ') : <span class="muted">none</span>}</dd>
        <dt>Muted</dt>
        <dd>{isMuted(monitor) ? <When iso={monitor.muted_until} /> : <span class="muted">no</span>}</dd>
      </dl>
      {write && (
        <div class="row actions">
          <MuteControl monitor={monitor} muted={isMuted(monitor)} onChanged={set} />
          <button type="button" disabled={busy} onClick={() => void sendTest()}>
            Send test notification
          </button>
          <Link href={`/alerts/${monitor.id}/edit`} class="button">
            Edit
          </Link>
          <ConfirmButton
            label="Delete"
            title={`Delete the monitor “${monitor.name}”?`}
            confirmLabel="Delete monitor"
            danger
            testId="delete-monitor"
            action={async () => {
              await deleteMonitor(monitor.id);
              navigate('/alerts');
            }}
          >
            <p>The monitor stops, and its states and history are deleted with it. Its channels stay. This cannot be undone.</p>
          </ConfirmButton>
        </div>
      )}
      <p class="note ok small" role="status">
        {notice}
      </p>
      <ErrorNote error={testError} />
      <HistoryList history={history} channels={channels.items} />
    </section>
  );
}
