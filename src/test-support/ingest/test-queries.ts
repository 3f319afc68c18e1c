import assert from 'node:assert/strict';
import type { TestServer } from '../test-server.js';

/** One SOQL query's answer body, as tenant A (or `token`) sees it. */
export async function query(s: TestServer, q: string, token?: string): Promise<Record<string, unknown> & { events: Array<Record<string, unknown>> }> {
  const r = await s.request('POST', '/query', { json: { q }, token });
  assert.equal(r.status, 200, r.text);
  return r.body as Record<string, unknown> & { events: Array<Record<string, unknown>> };
}

/** `{severity: count}` of a dataset's events. */
export async function severityCounts(s: TestServer, dataset: string, token?: string): Promise<Record<string, number>> {
  const body = (await query(s, `dataset:${dataset} group by severity`, token)) as unknown as { groups: Array<{ value: string; count: number }> };
  return Object.fromEntries(body.groups.map((g) => [g.value, g.count]));
}

/** How many distinct messages a dataset holds (each test line has its own). */
export async function distinctMessages(s: TestServer, dataset: string): Promise<number> {
  const body = (await query(s, `dataset:${dataset} stats count_distinct(message), count()`)) as unknown as { stats: Array<{ values: Record<string, number> }> };
  const row = body.stats[0]?.values ?? {};
  assert.equal(row['count_distinct(message)'], row['count()'], `every event of ${dataset} is stored once: ${JSON.stringify(body)}`);
  return row['count()'] ?? 0;
}
