import type { Tenant } from '../tenancy/tenant.js';
import type { QueryResult, QueryService } from '../query/query-service.js';
import type { Expr, SoqlQuery, StatsByItem, Value } from '../soql/index.js';
import { apiEventJson } from '../query/event-shape.js';
import { severities } from '../shared/event-record.js';

/** One group's number over the window: `group` as the query API writes `by`, keyed by its JSON. */
export interface GroupValue {
  key: string;
  group: Record<string, unknown>;
  value: number | null;
}

const tsBound = (op: '>=' | '<=', ms: number): Expr => ({
  type: 'compare',
  field: { kind: 'canonical', name: 'ts' },
  op,
  value: { type: 'time', time: { kind: 'absolute', ms } },
  position: 0,
});

/** The query's filter ANDed with `from <= ts <= to` (and any extra conditions). */
export function withinWindow(query: SoqlQuery, from: number, to: number, extra: Expr[] = []): Expr {
  return { type: 'and', items: [...(query.filter ? [query.filter] : []), tsBound('>=', from), tsBound('<=', to), ...extra], position: 0 };
}

/**
 * Runs the monitor's stats query over [from, to] through the query service: tenancy and the
 * tenant's active datasets applied as for POST /query, with the store's memory bound; it is not
 * charged to `queries_month` (DECISIONS.md §18: evaluations are not queries).
 */
export async function groupValues(queries: QueryService, tenant: Tenant, query: SoqlQuery, from: number, to: number): Promise<GroupValue[]> {
  return statsGroupValues(await queries.run(tenant, { ...query, filter: withinWindow(query, from, to) }));
}

/** A stats answer as the monitor reads it: each group's first (only) aggregate, keyed by the group's JSON. */
function statsGroupValues(result: QueryResult): GroupValue[] {
  if (result.kind !== 'stats') return [];
  return result.stats.map((row) => ({ key: JSON.stringify(row.by), group: row.by, value: Object.values(row.values)[0] ?? null }));
}

/** `field == value` for one group value, or undefined when it cannot be written (objects, arrays). */
function equality(item: StatsByItem, value: unknown): Expr | undefined {
  if (item.kind !== 'field') return undefined;
  const field = item.field;
  if (value === null) return { type: 'not', expr: { type: 'exists', field, position: 0 }, position: 0 };
  let v: Value;
  if (field.kind === 'canonical' && field.name === 'severity') {
    const level = severities.indexOf(value as (typeof severities)[number]);
    if (level < 0) return undefined;
    v = { type: 'severity', level };
  } else if (typeof value === 'string') v = { type: 'text', text: value, quoted: true };
  else if (field.kind === 'payload' && (typeof value === 'number' || typeof value === 'boolean')) v = { type: 'text', text: String(value), quoted: false };
  else return undefined;
  return { type: 'compare', field, op: '==', value: v, position: 0 };
}

/** Up to 10 of the group's newest events in the window, as POST /query returns them ([] when the group cannot be written as a filter). */
export async function groupEvents(queries: QueryService, tenant: Tenant, query: SoqlQuery, group: Record<string, unknown>, from: number, to: number): Promise<Array<Record<string, unknown>>> {
  const by = query.stats?.by ?? [];
  const values = Object.values(group);
  const extra = by.map((item, i) => equality(item, values[i]));
  if (extra.some((e) => e === undefined)) return [];
  const result = await queries.run(tenant, { filter: withinWindow(query, from, to, extra as Expr[]), groupBy: null, stats: null });
  if (result.kind !== 'events') return [];
  return result.events.slice(0, 10).map((e) => JSON.parse(apiEventJson(e, tenant, { includeTenant: false })) as Record<string, unknown>);
}
