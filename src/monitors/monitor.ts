import { AppError, badRequest } from '../errors/app-error.js';
import { parseSoql, rejectAggregationForTail, type SoqlQuery } from '../soql/index.js';
import { checkDuration } from './durations.js';
import type { MonitorsTable } from './tables.js';

export type MonitorKind = 'threshold' | 'match';
export const conditionOps = ['>', '>=', '<', '<=', '=='] as const;
export type ConditionOp = (typeof conditionOps)[number];
export interface Condition {
  op: ConditionOp;
  value: number;
}

/** What a client sends (POST; PATCH sends part of it and is merged over the stored monitor). */
export interface MonitorInput {
  name: string;
  kind: MonitorKind;
  q: string;
  channel_ids: string[];
  muted_until?: string | null;
  notify_on_resolve?: boolean;
  window?: string;
  every?: string;
  condition?: Condition;
  for?: string;
  no_data?: 'ok' | 'alerting';
  repeat?: string;
  group_window?: string;
}

/** A monitor as the API shows it (the fields of the other kind are left out). */
export interface MonitorView {
  id: string;
  name: string;
  kind: MonitorKind;
  q: string;
  channel_ids: string[];
  muted_until: string | null;
  notify_on_resolve: boolean;
  window?: string;
  every?: string;
  condition?: Condition;
  for?: string;
  no_data?: 'ok' | 'alerting';
  repeat?: string;
  group_window?: string;
  created_at: string;
  updated_at: string;
}

/** DECISIONS.md §18's ranges (docs/monitors.md "Limits"). */
export const limits = {
  window: ['1m', '24h'],
  every: ['1m', '1h'],
  for: ['0s', '24h'],
  repeat: ['1m', '7d'],
  group_window: ['1s', '1h'],
} as const;
export const defaults = { every: '1m', for: '0s', no_data: 'ok', repeat: '4h', group_window: '60s' } as const;

const thresholdFields = ['window', 'every', 'condition', 'for', 'no_data', 'repeat'] as const;

/** A threshold monitor's q: a stats query with one aggregate, grouped by fields only (no bin). */
export function parseThresholdQuery(q: string): SoqlQuery {
  const query = parseSoql(q);
  const at = (position: number, message: string) => new AppError('soql_parse_error', message, { position, near: q.slice(position, position + 20), field: '' });
  if (!query.stats) throw at(q.length, 'a threshold monitor needs a `stats` clause giving one number per group, e.g. `severity >= error stats count() by source`');
  if (query.stats.aggregates.length !== 1) throw at(query.stats.aggregates[1]!.position, 'a threshold monitor compares one number per group: keep one aggregate in `stats`');
  const bin = query.stats.by.find((b) => b.kind === 'bin');
  if (bin) throw at(bin.position, 'a threshold monitor is evaluated over its `window`: remove the bin from `by`');
  return query;
}

/** A match monitor's q: a filter as live tail takes it (no group by, no stats). */
export function parseMatchQuery(q: string): SoqlQuery {
  const query = parseSoql(q);
  rejectAggregationForTail(query);
  return query;
}

/**
 * Checks a whole monitor (after defaults, or a PATCH merged over the stored one) and answers the
 * row's columns. Every problem is a 400 naming the field, or a SOQL error with its position.
 */
export function checkMonitor(input: MonitorInput): Omit<MonitorsTable, 'id' | 'org_id' | 'project_id' | 'mode' | 'next_eval_at' | 'lease_until' | 'lease_owner' | 'last_eval_at' | 'last_high' | 'last_low' | 'last_match_at' | 'created_at' | 'updated_at'> {
  if (input.muted_until != null && Number.isNaN(Date.parse(input.muted_until))) throw badRequest('muted_until: not a date-time', { field: 'muted_until' });
  const common = {
    name: input.name,
    kind: input.kind,
    q: input.q,
    channel_ids: JSON.stringify([...new Set(input.channel_ids)]),
    muted_until: input.muted_until != null ? new Date(input.muted_until).toISOString() : null,
    notify_on_resolve: input.notify_on_resolve === false ? 0 : 1,
  };
  if (input.kind === 'match') {
    const stray = thresholdFields.find((f) => input[f] !== undefined);
    if (stray) throw badRequest(`${stray}: only a threshold monitor has it`, { field: stray });
    parseMatchQuery(input.q);
    const groupWindow = input.group_window ?? defaults.group_window;
    checkDuration('group_window', groupWindow, ...limits.group_window);
    return { ...common, window: null, every: null, condition_op: null, condition_value: null, for: null, no_data: null, repeat: null, group_window: groupWindow };
  }
  if (input.group_window !== undefined) throw badRequest('group_window: only a match monitor has it', { field: 'group_window' });
  parseThresholdQuery(input.q);
  if (input.window === undefined) throw badRequest('window: a threshold monitor needs one (1m…24h)', { field: 'window' });
  if (input.condition === undefined) throw badRequest('condition: a threshold monitor needs one ({op, value})', { field: 'condition' });
  if (!Number.isFinite(input.condition.value)) throw badRequest('condition.value: not a finite number', { field: 'condition.value' });
  const every = input.every ?? defaults.every;
  const window = checkDuration('window', input.window, ...limits.window);
  const everyMs = checkDuration('every', every, ...limits.every);
  if (everyMs > window) throw badRequest(`every: ${every} is longer than the window ${input.window}; events between windows would never be seen`, { field: 'every' });
  const forText = input.for ?? defaults.for;
  const repeat = input.repeat ?? defaults.repeat;
  checkDuration('for', forText, ...limits.for);
  checkDuration('repeat', repeat, ...limits.repeat);
  return {
    ...common,
    window: input.window,
    every,
    condition_op: input.condition.op,
    condition_value: input.condition.value,
    for: forText,
    no_data: input.no_data ?? defaults.no_data,
    repeat,
    group_window: null,
  };
}

/** The stored row back as a client's input (PATCH merges over it). */
export function inputOf(row: MonitorsTable): MonitorInput {
  const view = toMonitorView(row);
  const { id: _id, created_at: _c, updated_at: _u, ...input } = view;
  return input;
}

export function toMonitorView(row: MonitorsTable): MonitorView {
  const common = {
    id: row.id,
    name: row.name,
    kind: row.kind,
    q: row.q,
    channel_ids: JSON.parse(row.channel_ids) as string[],
    muted_until: row.muted_until,
    notify_on_resolve: row.notify_on_resolve === 1,
  };
  const times = { created_at: row.created_at, updated_at: row.updated_at };
  if (row.kind === 'match') return { ...common, group_window: row.group_window!, ...times };
  return {
    ...common,
    window: row.window!,
    every: row.every!,
    condition: { op: row.condition_op as ConditionOp, value: row.condition_value! },
    for: row.for!,
    no_data: row.no_data!,
    repeat: row.repeat!,
    ...times,
  };
}
