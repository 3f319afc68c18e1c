// Types of the Alerts pages (from the generated API types) and what the pages work out from
// them: a monitor's state from its history, durations and conditions in words, field errors.
import type { components, paths } from '../../api/schema';
import { ApiError } from '../../api/errors';

export type Monitor = components['schemas']['Monitor'];
export type Channel = components['schemas']['Channel'];
export type Delivery = components['schemas']['ChannelDelivery'];
export type HistoryItem = paths['/v1/monitors/{id}/history']['get']['responses'][200]['content']['application/json']['history'][number];
export type MonitorBody = paths['/v1/monitors']['post']['requestBody']['content']['application/json'];
export type ChannelKind = Channel['kind'];
export type Condition = NonNullable<Monitor['condition']>;
export type Preview = paths['/v1/monitors/preview']['post']['responses'][200]['content']['application/json'];

/** A group as the API names it (`{source: "eu-1"}`) in words: `source=eu-1`, or "all events". */
export function groupText(group: Record<string, unknown>): string {
  const parts = Object.entries(group).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return parts.length ? parts.join(', ') : 'all events';
}

export function conditionText(m: Pick<Monitor, 'condition'>): string {
  return m.condition ? `${m.condition.op} ${m.condition.value}` : '';
}

export function isMuted(m: Pick<Monitor, 'muted_until'>, now = Date.now()): boolean {
  return m.muted_until !== null && Date.parse(m.muted_until) > now;
}

/**
 * What the API tells of a monitor's state: the monitor has no state field, so it is read from
 * its newest history (the last state change of each group; a match monitor has none, only
 * notifications). `groups` are the groups whose last change left them pending or firing.
 */
export interface StateSummary {
  state: 'muted' | 'firing' | 'pending' | 'ok' | 'no_changes';
  /** The state the history gives, muted or not (a muted monitor still changes state, silently). */
  underlying: Exclude<StateSummary['state'], 'muted'>;
  /** The value of the newest state change (what the evaluation saw when the state last changed). */
  lastValue: number | null | undefined;
  lastChangeAt: string | undefined;
  lastNotifiedAt: string | undefined;
  groups: Array<{ group: Record<string, unknown>; state: 'pending' | 'firing'; value: number | null }>;
}

export function summarise(monitor: Monitor, history: HistoryItem[] | undefined, now = Date.now()): StateSummary {
  const seen = new Set<string>();
  const groups: StateSummary['groups'] = [];
  let lastValue: number | null | undefined;
  let lastChangeAt: string | undefined;
  let lastNotifiedAt: string | undefined;
  for (const item of history ?? []) {
    if (item.type === 'notification') {
      if (item.delivery.status !== 'test') lastNotifiedAt ??= item.created_at;
      continue;
    }
    if (lastChangeAt === undefined) {
      lastChangeAt = item.created_at;
      lastValue = item.value;
    }
    const key = JSON.stringify(item.group);
    if (seen.has(key)) continue;
    seen.add(key);
    if (item.to !== 'ok') groups.push({ group: item.group, state: item.to, value: item.value });
  }
  const underlying = groups.some((g) => g.state === 'firing') ? 'firing' : groups.length > 0 ? 'pending' : lastChangeAt ? 'ok' : 'no_changes';
  return { state: isMuted(monitor, now) ? 'muted' : underlying, underlying, lastValue, lastChangeAt, lastNotifiedAt, groups };
}

/** The rule of the explorer's "Create monitor from this query": a query with `stats` is a threshold monitor. */
export function kindOf(q: string): Monitor['kind'] {
  return /\bstats\b/i.test(q) ? 'threshold' : 'match';
}

/**
 * The form field an API refusal is about: the envelope's `field` (`condition.value`,
 * `channel_ids`, …), a SOQL error's query, or the field named in a schema refusal's message
 * (`field "name" is required`). '' when it is about no one field.
 */
export function fieldOf(error: unknown): string {
  if (!(error instanceof ApiError)) return '';
  if (error.code.startsWith('soql_')) return 'q';
  const field = error.details.field;
  if (typeof field === 'string' && field) return field.split(/[.[]/)[0]!;
  const named = /field "([^"]+)"/.exec(error.message);
  return named ? named[1]!.split(/[.[]/)[0]! : '';
}

export function formatValue(value: number | null | undefined): string {
  if (value === undefined) return '–';
  if (value === null) return 'no value';
  return value.toLocaleString(undefined, { maximumFractionDigits: 3 });
}
