// A monitor's state in words and colour, and the mute control (PATCH muted_until).
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorNote } from '../../components/notes';
import { formatDateTime } from '../../components/units';
import { muteMonitor } from './mutations';
import { shownState, stateOf, type Monitor, type ShownState } from './model';

const words: Record<ShownState, string> = {
  muted: 'muted',
  firing: 'firing',
  pending: 'pending',
  ok: 'ok',
  no_data: 'no data',
  not_evaluated: 'not evaluated yet',
  watching: 'watching',
};

const titles: Partial<Record<ShownState, string>> = {
  pending: 'the condition holds, for less than its `for` so far',
  no_data: 'the last evaluation gave no value: no events in the window, or an aggregate over none',
  not_evaluated: 'created or changed moments ago: the scheduler evaluates it at its next tick',
  watching: 'a match monitor has no state: it notifies each match as events are ingested',
};

/** The monitor's state from its `status` (the API's), muted or not. */
export function StateBadge(props: { monitor: Monitor }): JSX.Element {
  const { monitor } = props;
  const shown = shownState(monitor);
  const underlying = stateOf(monitor);
  const firing = monitor.status.groups_firing;
  const title = shown === 'muted' ? `muted until ${monitor.muted_until}` : shown === 'firing' ? `${firing} group${firing === 1 ? '' : 's'} firing` : (titles[shown] ?? '');
  const hidden = shown === 'muted' && (underlying === 'firing' || underlying === 'pending');
  return (
    <span class="states">
      <span class={`state state-${shown}`} title={title} data-testid="monitor-state" data-state={shown}>
        {words[shown]}
        {shown === 'muted' && monitor.muted_until && <span class="small"> until {formatDateTime(monitor.muted_until)}</span>}
        {shown === 'firing' && firing > 1 && <span class="small"> ({firing} groups)</span>}
      </span>
      {hidden && (
        <span class={`state state-${underlying}`} title="muted: no notification is sent while it lasts">
          {words[underlying]}, silently
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
