// The monitor form's fields beside the query: the threshold or match settings and the channels.
import type { JSX } from 'preact';
import { Link } from '../../router';
import { FieldError, invalid } from './field-error';
import type { FormValues } from './form-state';
import type { Channel } from './model';

type Set = <K extends keyof FormValues>(key: K, value: FormValues[K]) => void;
const ops: Array<FormValues['op']> = ['>', '>=', '<', '<=', '=='];

function Duration(props: { label: string; name: keyof FormValues; values: FormValues; set: Set; error: unknown; hint: string }): JSX.Element {
  const { name } = props;
  const wrong = invalid(props.error, name);
  return (
    <div class="field">
      <label>
        {props.label}
        <input
          name={name}
          value={props.values[name] as string}
          size={6}
          autoComplete="off"
          spellcheck={false}
          onInput={(e) => props.set(name, e.currentTarget.value as never)}
          aria-invalid={wrong['aria-invalid']}
          aria-describedby={[`${name}-hint`, wrong['aria-describedby']].filter(Boolean).join(' ')}
        />
      </label>
      <span class="muted small" id={`${name}-hint`}>
        {props.hint}
      </span>
      <FieldError error={props.error} name={name} />
    </div>
  );
}

export function KindFields(props: { values: FormValues; set: Set; error: unknown }): JSX.Element {
  const { values: v, set, error } = props;
  if (v.kind === 'match') {
    return (
      <div class="form-grid">
        <Duration label="Group window" name="group_window" values={v} set={set} error={error} hint="later matches within it go out together (1s…1h)" />
      </div>
    );
  }
  return (
    <div class="form-grid">
      <fieldset class="condition">
        <legend>Condition: notify when the value is</legend>
        <div class="row nowrap">
          <select aria-label="Comparison" name="op" value={v.op} onChange={(e) => set('op', e.currentTarget.value as FormValues['op'])}>
            {ops.map((op) => (
              <option key={op} value={op}>
                {op}
              </option>
            ))}
          </select>
          <input aria-label="Threshold" name="value" inputMode="decimal" size={8} value={v.value} onInput={(e) => set('value', e.currentTarget.value)} {...invalid(error, 'condition')} />
        </div>
        <FieldError error={error} name="condition" />
      </fieldset>
      <Duration label="Window" name="window" values={v} set={set} error={error} hint="the query covers the last window (1m…24h)" />
      <Duration label="Every" name="every" values={v} set={set} error={error} hint="evaluated this often (1m…1h, ≤ window)" />
      <Duration label="For" name="for" values={v} set={set} error={error} hint="pending this long before firing (0s…24h)" />
      <Duration label="Repeat" name="repeat" values={v} set={set} error={error} hint="notified again while firing (1m…7d)" />
      <div class="field">
        <label>
          Without data
          <select name="no_data" value={v.no_data} onChange={(e) => set('no_data', e.currentTarget.value as FormValues['no_data'])}>
            <option value="ok">ok: no value is no alert</option>
            <option value="alerting">alerting: no value fires</option>
          </select>
        </label>
        <FieldError error={error} name="no_data" />
      </div>
      <label class="check">
        <input type="checkbox" name="notify_on_resolve" checked={v.notify_on_resolve} onChange={(e) => set('notify_on_resolve', e.currentTarget.checked)} />
        <span>Notify when it resolves</span>
      </label>
    </div>
  );
}

export function ChannelPicker(props: { values: FormValues; set: Set; error: unknown; channels: Channel[] | undefined }): JSX.Element {
  const { values: v, set, channels } = props;
  const toggle = (id: string, on: boolean) => set('channel_ids', on ? [...v.channel_ids, id] : v.channel_ids.filter((x) => x !== id));
  return (
    <fieldset class="channel-picker" {...invalid(props.error, 'channel_ids')}>
      <legend>Notify these channels</legend>
      {channels === undefined ? (
        <p class="muted small">Loading channels…</p>
      ) : channels.length === 0 ? (
        <p class="small">
          This project has no channel yet: <Link href="/alerts">add one on the Alerts page</Link>. A monitor without a channel records its history and notifies no one.
        </p>
      ) : (
        channels.map((c) => (
          <label key={c.id} class="check">
            <input type="checkbox" name="channel" value={c.id} checked={v.channel_ids.includes(c.id)} onChange={(e) => toggle(c.id, e.currentTarget.checked)} />
            <span>
              {c.name} <span class="muted small">({c.kind}{c.enabled ? '' : ', disabled'})</span>
            </span>
          </label>
        ))
      )}
      <FieldError error={props.error} name="channel_ids" />
    </fieldset>
  );
}
