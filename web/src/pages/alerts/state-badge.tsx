// A monitor's state in words and colour, and the mute control (PATCH muted_until).
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorNote } from '../../components/notes';
import { formatDateTime } from '../../components/units';
import { muteMonitor } from './mutations';
import { groupText, type Monitor, type StateSummary } from './model';

const words: Record<StateSummary['state'], string> = {
  muted: 'muted',
  firing: 'firing',
  pending: 'pending',
  ok: 'ok',
  no_changes: 'no state change yet',
};

export function StateBadge(props: { monitor: Monitor; summary: StateSummary | undefined }): JSX.Element {
  const { monitor, summary } = props;
  if (!summary) return <span class="muted small">…</span>;
  const firing = summary.groups.filter((g) => g.state === 'firing');
  const title =
    summary.state === 'muted'
      ? `muted until ${monitor.muted_until}`
      : firing.length
        ? `firing for ${firing.map((g) => groupText(g.group)).join('; ')}`
        : monitor.kind === 'match'
          ? 'a match monitor has no state: it notifies each match'
          : '';
  const hidden = summary.state === 'muted' && (summary.underlying === 'firing' || summary.underlying === 'pending');
  return (
    <span class="states">
      <span class={`state state-${summary.state}`} title={title} data-testid="monitor-state">
        {monitor.kind === 'match' && summary.state === 'no_changes' ? 'watching' : words[summary.state]}
        {summary.state === 'muted' && monitor.muted_until && <span class="small"> until {formatDateTime(monitor.muted_until)}</span>}
        {summary.state === 'firing' && firing.length > 1 && <span class="small"> ({firing.length} groups)</span>}
      </span>
      {hidden && (
        <span class={`state state-${summary.underlying}`} title="muted: no notification is sent while it lasts">
          {words[summary.underlying]}, silently
        </span>
      )}
    </span>
  );
}

const muteChoices = [
  { value: '3600000', label: '1 hour' },
  { value: '28800000', label: '8 hours' },
  { value: '86400000', label: '24 hours' },
  { value: '604800000', label: '7 days' },
];

/** Mute for a while, or unmute: the answer is the monitor as stored, handed to `onChanged`. */
export function MuteControl(props: { monitor: Monitor; muted: boolean; onChanged: (m: Monitor) => void }): JSX.Element {
  const { monitor } = props;
  const [span, setSpan] = useState(muteChoices[0]!.value);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async (until: string | null) => {
    setBusy(true);
    setError(undefined);
    try {
      props.onChanged(await muteMonitor(monitor.id, until));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="mute">
      {props.muted ? (
        <button type="button" disabled={busy} onClick={() => void run(null)}>
          Unmute
        </button>
      ) : (
        <div class="row nowrap">
          <select aria-label={`Mute ${monitor.name} for`} value={span} onChange={(e) => setSpan(e.currentTarget.value)}>
            {muteChoices.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
          <button type="button" disabled={busy} onClick={() => void run(new Date(Date.now() + Number(span)).toISOString())}>
            Mute
          </button>
        </div>
      )}
      <ErrorNote error={error} />
    </div>
  );
}
