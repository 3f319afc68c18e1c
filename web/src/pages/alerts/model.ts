// Types of the Alerts pages (from the generated API types) and what the pages work out from
// them: the state a monitor is shown in, times, durations and conditions in words, field errors.
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

export type MonitorStatus = Monitor['status'];

/**
 * The state a monitor is shown in: its status's state (the API's: the worst of its groups for a
 * threshold monitor, `watching` for a match monitor), `not_evaluated` for a threshold monitor
 * before its first evaluation (the API says `no_data` then, with no `last_evaluated_at`), and
 * `muted` while `muted_until` is ahead (the state underneath still changes, silently).
 */
export type ShownState = 'muted' | 'not_evaluated' | MonitorStatus['state'];

/** The state underneath a mute. */
export function stateOf(m: Pick<Monitor, 'kind' | 'status'>): Exclude<ShownState, 'muted'> {
  return m.kind === 'threshold' && m.status.last_evaluated_at === null ? 'not_evaluated' : m.status.state;
}

export function shownState(m: Pick<Monitor, 'kind' | 'status' | 'muted_until'>, now = Date.now()): ShownState {
  return isMuted(m, now) ? 'muted' : stateOf(m);
}

/** The groups a monitor's history leaves pending or firing (each group's newest state change), for its page. */
export function openGroups(history: HistoryItem[]): Array<{ group: Record<string, unknown>; state: 'pending' | 'firing'; value: number | null }> {
  const seen = new Set<string>();
  const groups: ReturnType<typeof openGroups> = [];
  for (const item of history) {
    if (item.type !== 'state_change') continue;
    const key = JSON.stringify(item.group);
    if (seen.has(key)) continue;
    seen.add(key);
    if (item.to !== 'ok') groups.push({ group: item.group, state: item.to, value: item.value });
  }
  return groups;
}

/**
 * A moment relative to `now` in words: `in 40 s`, `in 3 min`, `in 2 h`, `12 s ago`, … and
 * `due now` for a due time already passed (`due` true: the scheduler takes it at its next tick).
 */
export function relativeTime(iso: string, now = Date.now(), due = false): string {
  const ms = Date.parse(iso) - now;
  if (due && ms <= 0) return 'due now';
  const abs = Math.abs(ms);
  const text = abs < 90_000 ? `${Math.max(0, Math.round(abs / 1000))} s` : abs < 90 * 60_000 ? `${Math.round(abs / 60_000)} min` : abs < 36 * 3_600_000 ? `${Math.round(abs / 3_600_000)} h` : `${Math.round(abs / 86_400_000)} d`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
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
