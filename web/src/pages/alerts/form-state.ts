// The monitor form's values, from a monitor (edit) or a query (new), and the request body.
import { kindOf, type Monitor, type MonitorBody } from './model';
import type { PreviewInput } from './hooks/use-preview';

export interface FormValues {
  name: string;
  kind: Monitor['kind'];
  q: string;
  window: string;
  every: string;
  op: NonNullable<Monitor['condition']>['op'];
  value: string;
  for: string;
  no_data: 'ok' | 'alerting';
  repeat: string;
  group_window: string;
  notify_on_resolve: boolean;
  channel_ids: string[];
}

export function valuesFor(monitor: Monitor | undefined, q: string): FormValues {
  if (monitor) {
    return {
      name: monitor.name,
      kind: monitor.kind,
      q: monitor.q,
      window: monitor.window ?? '5m',
      every: monitor.every ?? '1m',
      op: monitor.condition?.op ?? '>',
      value: monitor.condition ? String(monitor.condition.value) : '',
      for: monitor.for ?? '0s',
      no_data: monitor.no_data ?? 'ok',
      repeat: monitor.repeat ?? '4h',
      group_window: monitor.group_window ?? '60s',
      notify_on_resolve: monitor.notify_on_resolve,
      channel_ids: monitor.channel_ids,
    };
  }
  return {
    name: '',
    kind: kindOf(q),
    q,
    window: '5m',
    every: '1m',
    op: '>',
    value: '',
    for: '0s',
    no_data: 'ok',
    repeat: '4h',
    group_window: '60s',
    notify_on_resolve: true,
    channel_ids: [],
  };
}

/** The condition's value as a number, or undefined while the field is not one. */
export function conditionValue(v: FormValues): number | undefined {
  const text = v.value.trim();
  if (text === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** The body for POST (and PATCH: the same fields, merged over the stored monitor); only the kind's own fields. */
export function bodyOf(v: FormValues): MonitorBody {
  const common = { name: v.name.trim(), kind: v.kind, q: v.q, channel_ids: v.channel_ids, notify_on_resolve: v.notify_on_resolve };
  if (v.kind === 'match') return { ...common, group_window: v.group_window.trim() };
  // A value that is not a number is sent as NaN → null: the API's 400 names condition.value.
  const value = conditionValue(v);
  return {
    ...common,
    window: v.window.trim(),
    every: v.every.trim(),
    condition: { op: v.op, value: value ?? (Number.NaN as number) },
    for: v.for.trim(),
    no_data: v.no_data,
    repeat: v.repeat.trim(),
  };
}

/** What the preview is asked for, or undefined while the form cannot be previewed. */
export function previewOf(v: FormValues): PreviewInput | undefined {
  const value = conditionValue(v);
  if (v.kind !== 'threshold' || !v.q.trim() || value === undefined || !/^\d+[smhd]$/.test(v.every.trim()) || !/^\d+[smhd]$/.test(v.for.trim())) return undefined;
  return { q: v.q, every: v.every.trim(), condition: { op: v.op, value }, for: v.for.trim(), no_data: v.no_data };
}
