import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../shared/ids.js';
import type { TestServer } from '../test-support/test-server.js';
import { monitorsTestServer } from '../test-support/monitors/test-monitors.js';
import { nextDueMs, slotKey, slotOffsetMs } from './schedule.js';

const minute = 60_000;

const statement = (q: string, org = 'org1', window = '5m') => slotKey({ org_id: org, project_id: 'prj1', mode: 'live', q, window });

test("a monitor's slot is stable and inside its every; the next due time is the first slot after now", () => {
  const id = statement('severity >= error stats count() by source');
  for (const every of [minute, 5 * minute, 3_600_000, 90_000]) {
    const offset = slotOffsetMs(id, every);
    assert.ok(offset >= 0 && offset < every);
    assert.equal(slotOffsetMs(id, every), offset, 'the same id gives the same offset');
    for (const now of [0, 1_764_000_000_000, 1_764_000_000_000 + offset, 1_764_000_000_000 + every - 1]) {
      const next = nextDueMs(id, every, now);
      assert.ok(next > now && next <= now + every, `${next} is after ${now}, within every`);
      assert.equal(((next % every) + every) % every, offset, 'on the monitor\'s grid');
    }
  }
  // Late by most of an interval: the next slot, not now + every (no drift); missed slots are skipped.
  const base = Math.floor(1_764_000_000_000 / minute) * minute + slotOffsetMs(id, minute);
  assert.equal(nextDueMs(id, minute, base), base + minute);
  assert.equal(nextDueMs(id, minute, base + 55_000), base + minute);
  assert.equal(nextDueMs(id, minute, base + 3 * minute + 1), base + 4 * minute);
});

test('1,000 different monitors created together fall due spread over the minute, not at once', () => {
  // Queries that differ in a character or two (a source, a value), of one tenant.
  const offsets = Array.from({ length: 1000 }, (_, k) => slotOffsetMs(statement(`source:srv-${k} stats count()`), minute));
  const perSecond = new Array<number>(60).fill(0);
  for (const o of offsets) perSecond[Math.floor(o / 1000)]!++;
  // ~16.7 a second on average; all at once would be 1,000 in one second.
  assert.ok(Math.max(...perSecond) <= 40, `at most 40 due in one second: ${perSecond.join(' ')}`);
  assert.ok(Math.min(...perSecond) >= 3, `every second has some: ${perSecond.join(' ')}`);
  // And with random organisations (ULIDs) over one query.
  const orgs = Array.from({ length: 1000 }, () => slotOffsetMs(statement('stats count()', newId.org()), minute));
  const orgsPerSecond = new Array<number>(60).fill(0);
  for (const o of orgs) orgsPerSecond[Math.floor(o / 1000)]!++;
  assert.ok(Math.max(...orgsPerSecond) <= 40 && Math.min(...orgsPerSecond) >= 3, orgsPerSecond.join(' '));
});

test("monitors of one statement share a slot (one read for them all); the tenant, q and window are the statement", () => {
  const q = 'severity >= error stats count() by source';
  assert.equal(slotOffsetMs(statement(q), minute), slotOffsetMs(statement(q), minute));
  const others = [statement(q, 'org2'), statement(q + ' ', 'org1'), statement(q, 'org1', '15m'), slotKey({ org_id: 'org1', project_id: 'prj2', mode: 'live', q, window: '5m' }), slotKey({ org_id: 'org1', project_id: 'prj1', mode: 'test', q, window: '5m' })];
  assert.equal(new Set([statement(q), ...others]).size, 6, 'each is another key');
});

describe('threshold monitors over HTTP: each due at its own offset, evaluated once per interval', () => {
  const server = monitorsTestServer();
  let s: TestServer;
  before(() => {
    s = server.s;
  });

  test('20 monitors created at once: evaluated at once, then each once a minute at its own time, not together; a twin of one statement with it', async () => {
    const ids: string[] = [];
    for (let k = 0; k < 20; k++) {
      const res = await s.request('POST', '/monitors', { json: { name: `m${k}`, kind: 'threshold', q: `event == "sched${k}" stats count()`, window: '1m', condition: { op: '>', value: 1000 }, channel_ids: [] } });
      assert.equal(res.status, 201, res.text);
      ids.push(res.body.id as string);
    }
    const lastEvaluated = async () => {
      const list = await s.request('GET', '/monitors?limit=100');
      assert.equal(list.status, 200, list.text);
      const byId = new Map((list.body.monitors as Array<{ id: string; status: { last_evaluated_at: string | null; next_evaluation_at: string | null } }>).map((m) => [m.id, m.status]));
      return ids.map((id) => byId.get(id)!);
    };
    // A warning and a critical threshold on the first one's query: one statement, one slot.
    const critical = await s.request('POST', '/monitors', { json: { name: 'critical', kind: 'threshold', q: 'event == "sched0" stats count()', window: '1m', condition: { op: '>', value: 5000 }, channel_ids: [] } });
    assert.equal(critical.status, 201, critical.text);
    // Created due at once (docs/monitors.md "Status"): the first tick evaluates all 21.
    assert.equal(await s.server.monitors.evaluateDue(), 21);
    const criticalStatus = async () => (await s.request('GET', `/monitors/${critical.body.id}`)).body.status as { next_evaluation_at: string; last_evaluated_at: string };
    assert.equal((await criticalStatus()).next_evaluation_at, (await lastEvaluated())[0]!.next_evaluation_at, 'the same statement falls due at the same time');
    const first = await lastEvaluated();
    // The batch's now, which the next due times are computed from.
    const start = Date.parse(first[0]!.last_evaluated_at!);
    // From then on each is due at its slot: within the next minute, at 20 different times.
    const dues = first.map((m) => Date.parse(m.next_evaluation_at!));
    assert.ok(dues.every((d) => d > start && d <= start + minute), 'each due within its every');
    assert.ok(new Set(dues).size >= 18, `spread, not one due time: ${new Set(dues).size} distinct`);

    // Three minutes in steps of 5 s, the scheduler ticking at each: who is evaluated when.
    const times = new Map<string, number[]>(ids.map((id) => [id, []]));
    const ticksWithEvaluations = new Set<number>();
    let before = first.map((m) => m.last_evaluated_at);
    for (let t = 5_000; t <= 3 * minute; t += 5_000) {
      // To `start + t` exactly: the test clock also runs with real time, which under load would
      // add seconds over the 36 steps (and a fourth slot into "three minutes").
      s.clock.advance(Math.max(0, start + t - s.clock.now()));
      const n = await s.server.monitors.evaluateDue();
      const now = await lastEvaluated();
      now.forEach((m, i) => {
        if (m.last_evaluated_at !== before[i]) times.get(ids[i]!)!.push(Date.parse(m.last_evaluated_at!));
      });
      if (n > 0) ticksWithEvaluations.add(t);
      before = now.map((m) => m.last_evaluated_at);
    }
    for (const [i, id] of ids.entries()) {
      const evaluated = times.get(id)!;
      // Once per interval: three evaluations in three minutes, a minute apart, the first at the first tick at or after its slot.
      assert.equal(evaluated.length, 3, `monitor ${i}: ${evaluated.map((x) => x - start).join(', ')}`);
      assert.ok(evaluated[0]! >= dues[i]! && evaluated[0]! < dues[i]! + 6_000, `monitor ${i} evaluated at the first tick at or after its slot`);
      for (const gap of [evaluated[1]! - evaluated[0]!, evaluated[2]! - evaluated[1]!]) assert.ok(gap >= minute - 5_000 && gap < minute + 5_000, `monitor ${i}: a minute apart (${gap} ms)`);
    }
    // Not all at once: 20 monitors spread over a minute's 12 ticks fall on most of them.
    assert.ok(ticksWithEvaluations.size >= 20, `evaluations at ${ticksWithEvaluations.size} of 36 ticks`);
    assert.equal(Date.parse((await criticalStatus()).last_evaluated_at), times.get(ids[0]!)!.at(-1), 'evaluated with its twin, in the same batch');
    for (const id of [...ids, critical.body.id as string]) await s.request('DELETE', `/monitors/${id}`);
  });
});
