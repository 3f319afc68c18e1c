import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from '../test-support/test-server.js';
import { monitorsTestServer } from '../test-support/monitors/test-monitors.js';
import { nextEvaluation } from './status.js';

interface Status {
  state: string;
  groups_firing: number;
  last_value: number | null;
  last_evaluated_at: string | null;
  next_evaluation_at: string | null;
  last_match_at: string | null;
  last_notified_at: string | null;
}
const minute = 60_000;

describe("a monitor's status in GET /monitors and GET /monitors/{id} (docs/monitors.md \"Status\")", () => {
  const server = monitorsTestServer();
  let s: TestServer;
  before(() => {
    s = server.s;
  });
  const channel = () => server.channel();
  const create = async (json: object, token?: string): Promise<{ id: string; status: Status }> => {
    const res = await s.request('POST', '/monitors', { token, json: { name: 'm', kind: 'threshold', window: '1m', channel_ids: [], ...json } });
    assert.equal(res.status, 201, res.text);
    return res.body;
  };
  const ingest = async (event: string, counts: Record<string, number>, payload: object = {}, token?: string) => {
    const ts = new Date(s.clock.now() - 1_000).toISOString();
    const events = Object.entries(counts).flatMap(([source, n]) => Array.from({ length: n }, () => ({ ts, event, source, severity: 'error', payload })));
    const res = await s.request('POST', '/datasets/app/ingest', { token, json: events });
    assert.equal(res.status, 200, res.text);
  };
  const evaluate = async (advanceMs: number) => {
    s.clock.advance(advanceMs);
    return s.server.monitors.evaluateDue();
  };
  /** The status GET /monitors/{id} shows, checked to be the one the list shows. */
  const status = async (id: string, token?: string): Promise<Status> => {
    const one = await s.request('GET', `/monitors/${id}`, { token });
    assert.equal(one.status, 200, one.text);
    const list = await s.request('GET', '/monitors?limit=100', { token });
    const listed = (list.body.monitors as Array<{ id: string; status: Status }>).find((m) => m.id === id);
    assert.deepEqual(listed?.status, one.body.status, 'the list and GET show the same status');
    return one.body.status;
  };
  const gap = (later: string | null, earlier: string | null) => Date.parse(later!) - Date.parse(earlier!);

  test('before the first evaluation: no_data, no value, never evaluated, due now', async () => {
    const before = s.clock.now();
    const created = await create({ q: 'event == "s0" stats count()', condition: { op: '>', value: 5 } });
    assert.deepEqual({ ...created.status, next_evaluation_at: null }, {
      state: 'no_data',
      groups_firing: 0,
      last_value: null,
      last_evaluated_at: null,
      next_evaluation_at: null,
      last_match_at: null,
      last_notified_at: null,
    });
    // Created due at once: the next tick takes it.
    const next = Date.parse(created.status.next_evaluation_at!);
    assert.ok(next >= before && next <= s.clock.now(), created.status.next_evaluation_at!);
    assert.deepEqual(await status(created.id), created.status);
    // Read-only: a PATCH that sends it is refused, as any unknown field.
    const patched = await s.request('PATCH', `/monitors/${created.id}`, { json: { status: { state: 'ok' } } });
    assert.equal(patched.status, 400, patched.text);
    await s.request('DELETE', `/monitors/${created.id}`);
  });

  test('by source: firing with its groups and the highest value; resolved by no events → no_data; next evaluation moves by every', async () => {
    const [ch, receiver] = await channel();
    const { id } = await create({ q: 'event == "s1" stats count() by source', condition: { op: '>', value: 5 }, every: '2m', window: '5m', channel_ids: [ch] });
    await ingest('s1', { 'eu-1': 7, 'eu-2': 3, 'us-1': 9 });
    assert.equal(await evaluate(0), 1);
    await receiver.waitFor(2);
    const firing = await status(id);
    assert.equal(firing.state, 'firing');
    assert.equal(firing.groups_firing, 2);
    assert.equal(firing.last_value, 9);
    assert.ok(firing.last_evaluated_at);
    // Due again at its slot (docs/monitors.md "Due times"): within `every` of the evaluation.
    const first = gap(firing.next_evaluation_at, firing.last_evaluated_at);
    assert.ok(first > 0 && first <= 2 * minute, `due again within every after the evaluation: ${first} ms`);
    assert.ok(firing.last_notified_at && Date.parse(firing.last_notified_at) >= Date.parse(firing.last_evaluated_at!));
    assert.equal(firing.last_match_at, firing.last_evaluated_at, 'the condition held at this evaluation');

    // Before its slot it is not due: nothing changes. The clock runs on meanwhile (the store's
    // reads take their time, on ClickHouse above all), so both moves are measured from its now.
    const untilSlot = () => Date.parse(firing.next_evaluation_at!) - s.clock.now();
    if (untilSlot() > 10_000) {
      assert.equal(await evaluate(untilSlot() - 10_000), 0);
      assert.deepEqual(await status(id), firing);
    }
    // At its slot: still firing (the events are in the 5m window).
    assert.equal(await evaluate(Math.max(0, untilSlot())), 1);
    const again = await status(id);
    assert.equal(again.state, 'firing');
    assert.equal(again.last_match_at, again.last_evaluated_at);
    assert.ok(gap(again.last_evaluated_at, firing.next_evaluation_at) >= 0);
    // From its slot on, due every `every` exactly.
    assert.equal(gap(again.next_evaluation_at, firing.next_evaluation_at), 2 * minute, 'the next evaluation moved on by every');

    // The events leave the window: both groups resolve; with `by` and no events no group has a value.
    await evaluate(5 * minute);
    await receiver.waitFor(4);
    const resolved = await status(id);
    assert.deepEqual([resolved.state, resolved.groups_firing, resolved.last_value], ['no_data', 0, null]);
    assert.ok(gap(resolved.last_evaluated_at, again.last_evaluated_at) >= 5 * minute);
    assert.equal(resolved.last_match_at, again.last_evaluated_at, 'the last evaluation whose condition held');
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('by source with a condition `<`: the value shown is the lowest group, the one nearest to firing', async () => {
    const { id } = await create({ q: 'event == "s4" stats count() by source', condition: { op: '<', value: 5 }, window: '5m' });
    await ingest('s4', { 'eu-1': 7, 'eu-2': 3, 'us-1': 9 });
    await evaluate(0);
    assert.deepEqual(await status(id).then((x) => [x.state, x.groups_firing, x.last_value]), ['firing', 1, 3]);
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('without by: firing with its value, then ok with the value 0 once the count falls; pending while `for` runs', async () => {
    const { id } = await create({ q: 'event == "s2" stats count()', condition: { op: '>', value: 5 } });
    await ingest('s2', { a: 6 });
    await evaluate(0);
    assert.deepEqual(await status(id).then((x) => [x.state, x.groups_firing, x.last_value]), ['firing', 1, 6]);
    await evaluate(2 * minute);
    const ok = await status(id);
    assert.deepEqual([ok.state, ok.groups_firing, ok.last_value], ['ok', 0, 0]);
    assert.equal(ok.last_notified_at, null, 'no channel: nothing was stored');

    const delayed = await create({ q: 'event == "s2" stats count()', condition: { op: '>', value: 5 }, for: '5m' });
    await ingest('s2', { a: 6 });
    await evaluate(0);
    assert.deepEqual(await status(delayed.id).then((x) => [x.state, x.groups_firing, x.last_value]), ['pending', 0, 6]);
    // A mute does not change the state.
    const muted = await s.request('PATCH', `/monitors/${id}`, { json: { muted_until: new Date(s.clock.now() + 60 * minute).toISOString() } });
    assert.equal(muted.status, 200, muted.text);
    assert.equal(muted.body.status.state, 'ok');
    await s.request('DELETE', `/monitors/${id}`);
    await s.request('DELETE', `/monitors/${delayed.id}`);
  });

  test('no_data: evaluated without a value is no_data (no_data: ok) or firing with a null value (no_data: alerting)', async () => {
    const q = 'event == "s3" stats avg(payload.ms)';
    const quiet = await create({ q, condition: { op: '>', value: 100 } });
    const alerting = await create({ q, condition: { op: '>', value: 100 }, no_data: 'alerting' });
    await evaluate(0);
    const a = await status(quiet.id);
    assert.deepEqual([a.state, a.last_value], ['no_data', null]);
    assert.ok(a.last_evaluated_at, 'evaluated: only the value is missing');
    const b = await status(alerting.id);
    assert.deepEqual([b.state, b.groups_firing, b.last_value], ['firing', 1, null]);
    // Data below the threshold: both ok, with the value.
    s.clock.advance(minute);
    await ingest('s3', { a: 1 }, { ms: 5 });
    await evaluate(0);
    assert.deepEqual(await status(quiet.id).then((x) => [x.state, x.last_value]), ['ok', 5]);
    assert.deepEqual(await status(alerting.id).then((x) => [x.state, x.last_value]), ['ok', 5]);
    await s.request('DELETE', `/monitors/${quiet.id}`);
    await s.request('DELETE', `/monitors/${alerting.id}`);
  });

  test('a match monitor is watching, never scheduled; last_match_at and last_notified_at once a match is notified, not before', async () => {
    const [ch, receiver] = await channel();
    const created = await create({ kind: 'match', q: 'event:s4.flag', channel_ids: [ch], group_window: '1s', window: undefined });
    assert.deepEqual(created.status, { state: 'watching', groups_firing: 0, last_value: null, last_evaluated_at: null, next_evaluation_at: null, last_match_at: null, last_notified_at: null });
    // An event that does not match, then a test notification (not one of the monitor's): still nothing.
    await ingest('s4.other', { a: 1 });
    assert.equal((await s.request('POST', `/monitors/${created.id}/test`)).status, 202);
    await receiver.waitFor(1);
    assert.deepEqual(await status(created.id).then((x) => [x.last_match_at, x.last_notified_at]), [null, null]);
    await ingest('s4.flag', { a: 1 });
    const [, first] = await receiver.waitFor(2);
    const after = await status(created.id);
    assert.equal(after.state, 'watching');
    assert.ok(after.last_notified_at);
    assert.equal(after.next_evaluation_at, null);
    // The matching event's ingest time, as its notification shows it (stored with that notification).
    const notified = (JSON.parse(first!.body) as { events: Array<{ ingested_at: string }> }).events;
    assert.equal(after.last_match_at, notified[0]!.ingested_at);

    // A later match (the clock 5 s on), notified at once or with its group: last_match_at moves to it.
    s.clock.advance(5_000);
    await ingest('s4.flag', { b: 1 });
    const [, , third] = await receiver.waitFor(3);
    const later = (JSON.parse(third!.body) as { events: Array<{ ingested_at: string; source: string }> }).events;
    assert.deepEqual(later.map((e) => e.source), ['b']);
    const moved = await status(created.id);
    assert.equal(moved.last_match_at, later[0]!.ingested_at);
    assert.ok(gap(moved.last_match_at, after.last_match_at) >= 5_000);
    await s.request('DELETE', `/monitors/${created.id}`);
  });

  test("statuses are per tenant: another tenant's list shows only its own monitors, with their own state", async () => {
    const b = s.tenants.b.token;
    const q = 'event == "s5" stats count()';
    const mine = await create({ q, condition: { op: '>', value: 0 } });
    const theirs = await create({ q, condition: { op: '>', value: 0 } }, b);
    await ingest('s5', { a: 3 });
    await ingest('s5', { a: 1 }, {}, b);
    await evaluate(0);
    assert.deepEqual(await status(mine.id).then((x) => [x.state, x.last_value]), ['firing', 3]);
    assert.deepEqual(await status(theirs.id, b).then((x) => [x.state, x.last_value]), ['firing', 1]);
    const listed = (await s.request('GET', '/monitors?limit=100', { token: b })).body.monitors as Array<{ id: string }>;
    assert.deepEqual(listed.map((m) => m.id), [theirs.id]);
    assert.equal((await s.request('GET', `/monitors/${mine.id}`, { token: b })).status, 404);
    // Another project and the other mode of the same organisation do not see it either.
    for (const other of [s.tenants.aOther.token, s.tenants.aTest.token]) {
      assert.equal((await s.request('GET', `/monitors/${mine.id}`, { token: other })).status, 404);
      assert.ok(!((await s.request('GET', '/monitors?limit=100', { token: other })).body.monitors as Array<{ id: string }>).some((m) => m.id === mine.id));
    }
    await s.request('DELETE', `/monitors/${mine.id}`);
    await s.request('DELETE', `/monitors/${theirs.id}`, { token: b });
  });
});

test('next evaluation: next_eval_at, or the end of a lease held now (the evaluation in progress moves it on by every)', () => {
  const now = Date.parse('2026-01-01T00:10:00.000Z');
  const at = (m: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + m * minute).toISOString();
  assert.equal(nextEvaluation({ next_eval_at: at(12), lease_until: null }, now), at(12));
  assert.equal(nextEvaluation({ next_eval_at: at(9), lease_until: at(11) }, now), at(11), 'being evaluated: due again when the lease ends');
  assert.equal(nextEvaluation({ next_eval_at: at(9), lease_until: at(8) }, now), at(9), 'a lease that ran out (its process died): due now');
  assert.equal(nextEvaluation({ next_eval_at: null, lease_until: null }, now), null);
});
