import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { monitorsTestServer, type Receiver } from '../test-support/monitors/test-monitors.js';

const minute = 60_000;

describe('threshold monitors: evaluation, state per group, notifications at a real receiver', () => {
  const server = monitorsTestServer();
  let s: TestServer;
  before(() => {
    s = server.s;
  });
  const channel = () => server.channel();
  const monitor = async (json: object): Promise<string> => {
    const res = await s.request('POST', '/monitors', { json: { name: 'm', kind: 'threshold', window: '1m', ...json } });
    assert.equal(res.status, 201, res.text);
    return res.body.id;
  };
  const ingest = async (event: string, counts: Record<string, number>, payload: object = {}) => {
    const ts = new Date(s.clock.now() - 1_000).toISOString();
    const events = Object.entries(counts).flatMap(([source, n]) => Array.from({ length: n }, () => ({ ts, event, source, severity: 'error', payload })));
    const res = await s.request('POST', '/datasets/app/ingest', { json: events });
    assert.equal(res.status, 200, res.text);
  };
  const evaluate = async (advanceMs: number) => {
    s.clock.advance(advanceMs);
    await s.server.monitors.evaluateDue();
  };
  const history = async (id: string) => (await s.request('GET', `/monitors/${id}/history?limit=100`)).body.history as Array<{ type: string; from?: string; to?: string; group?: object; delivery?: { status: string } }>;
  const bodies = (r: Receiver) => r.received.map((x) => JSON.parse(x.body) as { status: string; group: { source?: string }; value: number; events: unknown[]; condition: unknown; window: { from: string; to: string }; url: string; events_total: number });

  test('error count by source over 1m > 5 fires for exactly the sources over it, and resolves when they fall back', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ q: 'event == "t1" AND severity >= error stats count() by source', condition: { op: '>', value: 5 }, channel_ids: [ch] });
    await ingest('t1', { 'eu-1': 7, 'eu-2': 3, 'us-1': 6 });
    await evaluate(0);
    await receiver.waitFor(2);
    const fired = bodies(receiver).sort((a, b) => String(a.group.source).localeCompare(String(b.group.source)));
    assert.deepEqual(fired.map((b) => [b.status, b.group, b.value]), [['firing', { source: 'eu-1' }, 7], ['firing', { source: 'us-1' }, 6]]);
    assert.deepEqual(fired[0]!.condition, { op: '>', value: 5 });
    assert.equal(fired[0]!.events.length, 7);
    assert.equal(fired[0]!.events_total, 7);
    assert.ok((fired[0]!.events as Array<{ source: string }>).every((e) => e.source === 'eu-1'));
    assert.equal(Date.parse(fired[0]!.window.to) - Date.parse(fired[0]!.window.from), minute);
    assert.match(fired[0]!.url, /\/dashboard\/\?q=/);
    // Still over it a minute later (fresh events): no second notification before `repeat` (4 h).
    s.clock.advance(minute);
    await ingest('t1', { 'eu-1': 6 });
    await evaluate(0);
    // Then nothing: both resolve, each notified once.
    await evaluate(minute);
    await receiver.waitFor(4);
    const resolved = bodies(receiver).slice(2);
    assert.deepEqual(resolved.map((b) => b.status).sort(), ['resolved', 'resolved']);
    const changes = (await history(id)).filter((h) => h.type === 'state_change');
    assert.equal(changes.length, 4);
    assert.equal((await history(id)).filter((h) => h.type === 'notification').length, 4);
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('a 1 h window goes on from its last answer: late events counted, events that left the window dropped', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ q: 'event == "t9" stats count() by source', window: '1h', condition: { op: '>', value: 3 }, channel_ids: [ch] });
    const at = async (agoMs: number, n: number) => {
      const ts = new Date(s.clock.now() - agoMs).toISOString();
      const res = await s.request('POST', '/datasets/app/ingest', { json: Array.from({ length: n }, () => ({ ts, event: 't9', source: 'eu-1' })) });
      assert.equal(res.status, 200, res.text);
    };
    const reads = { ...s.server.monitors.windowCounts.reads };
    await at(50 * minute, 2);
    await evaluate(0);
    // A minute later two events arrive late, 40 minutes old: 4 in the window.
    s.clock.advance(minute);
    await at(40 * minute, 2);
    await evaluate(0);
    await receiver.waitFor(1);
    // 15 minutes on, the first two are older than the window: 2.
    await evaluate(15 * minute);
    await receiver.waitFor(2);
    assert.deepEqual(bodies(receiver).map((b) => [b.status, b.value]), [['firing', 4], ['resolved', 2]]);
    const { whole, counted } = s.server.monitors.windowCounts.reads;
    assert.deepEqual([whole - reads.whole, counted - reads.counted], [1, 2], 'read whole once, then counted');
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('a heartbeat over 1 h (`stats count()` < 1) fires with 0 when its events stop, on the counted path too', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ q: 'event == "hb" stats count()', window: '1h', condition: { op: '<', value: 1 }, no_data: 'ok', channel_ids: [ch] });
    const reads = { ...s.server.monitors.windowCounts.reads };
    const res = await s.request('POST', '/datasets/app/ingest', { json: [{ ts: new Date(s.clock.now() - 1_000).toISOString(), event: 'hb', source: 'eu-1' }] });
    assert.equal(res.status, 200, res.text);
    await evaluate(0);
    await evaluate(30 * minute);
    assert.equal(receiver.received.length, 0, 'one heartbeat in the window: ok');
    // 31 minutes on, the heartbeat has left the window: the statement answers 0, not "no data".
    await evaluate(31 * minute);
    await receiver.waitFor(1);
    assert.deepEqual(bodies(receiver).map((b) => [b.status, b.value]), [['firing', 0]]);
    const { whole, counted } = s.server.monitors.windowCounts.reads;
    assert.deepEqual([whole - reads.whole, counted - reads.counted], [1, 2], 'read whole once, then counted');
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('an average over 1 h (`avg(payload.ms)` > 100) fires and resolves on the counted path, null when its numbers left', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ q: 'event == "lag" stats avg(payload.ms) by source', window: '1h', condition: { op: '>', value: 100 }, notify_on_resolve: true, channel_ids: [ch] });
    const reads = { ...s.server.monitors.windowCounts.reads };
    const lag = async (ago: number, ms: unknown) => {
      const res = await s.request('POST', '/datasets/app/ingest', { json: [{ ts: new Date(s.clock.now() - ago).toISOString(), event: 'lag', source: 'eu-1', payload: { ms } }] });
      assert.equal(res.status, 200, res.text);
    };
    await lag(30 * minute, 50.5);
    await evaluate(0);
    await lag(1_000, 250.5);
    await evaluate(minute);
    await receiver.waitFor(1);
    assert.deepEqual(bodies(receiver).map((b) => [b.status, b.value]), [['firing', 150.5]]);
    // 30 minutes on, the 50.5 has left the window: 250.5 alone, still firing (no repeat).
    await evaluate(30 * minute);
    assert.equal(receiver.received.length, 1);
    // Another 30, the 250.5 has left too; the one event in the window has no number ("n/a"):
    // the group is there with the value null, and resolves (no_data: ok).
    await lag(1_000, 'n/a');
    await evaluate(30 * minute);
    await receiver.waitFor(2);
    assert.deepEqual(bodies(receiver).map((b) => [b.status, b.value]), [['firing', 150.5], ['resolved', null]]);
    const { whole, counted } = s.server.monitors.windowCounts.reads;
    assert.deepEqual([whole - reads.whole, counted - reads.counted], [1, 3], 'read whole once, then counted');
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('`for` delays firing: pending first, firing once the condition held that long', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ q: 'event == "t2" stats count()', condition: { op: '>=', value: 2 }, for: '2m', channel_ids: [ch] });
    await ingest('t2', { a: 2 });
    await evaluate(0);
    s.clock.advance(minute);
    await ingest('t2', { a: 2 });
    await evaluate(0);
    assert.equal(receiver.received.length, 0);
    assert.deepEqual((await history(id)).map((h) => h.to), ['pending']);
    s.clock.advance(minute);
    await ingest('t2', { a: 2 });
    await evaluate(0);
    await receiver.waitFor(1);
    assert.equal(bodies(receiver)[0]!.status, 'firing');
    assert.deepEqual((await history(id)).filter((h) => h.type === 'state_change').map((h) => h.to), ['firing', 'pending']);
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('status.last_match_at: null until an evaluation whose condition holds (pending, then firing), kept once it no longer holds; a breach for want of data is no match', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ q: 'event == "t10" stats count()', condition: { op: '>', value: 2 }, for: '2m', channel_ids: [ch] });
    const status = async (monitorId = id) => {
      const res = await s.request('GET', `/monitors/${monitorId}`);
      assert.equal(res.status, 200, res.text);
      return res.body.status as { state: string; last_value: number | null; last_evaluated_at: string | null; last_match_at: string | null };
    };
    /** A minute on, `n` events, an evaluation: the status after it. */
    const minuteWith = async (n: number) => {
      s.clock.advance(minute);
      if (n) await ingest('t10', { a: n });
      await evaluate(0);
      return status();
    };
    assert.equal((await status()).last_match_at, null, 'not evaluated yet');
    await evaluate(0);
    const empty = await status();
    assert.deepEqual([empty.state, empty.last_value, empty.last_match_at], ['ok', 0, null]);
    assert.ok(empty.last_evaluated_at);
    const below = await minuteWith(2);
    assert.deepEqual([below.state, below.last_value, below.last_match_at], ['ok', 2, null], '2 is not > 2');
    // The condition holds: pending (for 2m), and that evaluation is the last match.
    const pending = await minuteWith(3);
    assert.deepEqual([pending.state, pending.last_value], ['pending', 3]);
    assert.equal(pending.last_match_at, pending.last_evaluated_at);
    await minuteWith(3);
    const firing = await minuteWith(3);
    assert.equal(firing.state, 'firing');
    const [fired] = await receiver.waitFor(1);
    const body = JSON.parse(fired!.body) as { status: string; window: { to: string } };
    assert.equal(body.status, 'firing');
    assert.equal(firing.last_match_at, firing.last_evaluated_at);
    assert.equal(firing.last_match_at, body.window.to, 'the evaluation that fired');
    // Resolved: later evaluations leave it at the last one whose condition held.
    const resolved = await minuteWith(0);
    assert.equal(resolved.state, 'ok');
    assert.ok(Date.parse(resolved.last_evaluated_at!) > Date.parse(firing.last_evaluated_at!));
    assert.equal(resolved.last_match_at, firing.last_match_at);
    const quiet = await minuteWith(1);
    assert.equal(quiet.last_match_at, firing.last_match_at);

    // no_data: alerting fires without a value: nothing matched.
    const noData = await monitor({ q: 'event == "t10" stats avg(payload.ms)', condition: { op: '>', value: 1 }, no_data: 'alerting', channel_ids: [] });
    await evaluate(0);
    const alerting = await status(noData);
    assert.deepEqual([alerting.state, alerting.last_value, alerting.last_match_at], ['firing', null, null]);
    await s.request('DELETE', `/monitors/${id}`);
    await s.request('DELETE', `/monitors/${noData}`);
  });

  test('no_data: alerting fires on a window without a value, ok does not', async () => {
    const [ch, receiver] = await channel();
    const q = 'event == "t3" stats avg(payload.ms)';
    const alerting = await monitor({ q, condition: { op: '>', value: 100 }, no_data: 'alerting', channel_ids: [ch] });
    const ok = await monitor({ q, condition: { op: '>', value: 100 }, channel_ids: [ch] });
    await evaluate(0);
    await receiver.waitFor(1);
    assert.equal(bodies(receiver)[0]!.status, 'firing');
    assert.equal(bodies(receiver)[0]!.value, null);
    assert.equal((await history(alerting)).filter((h) => h.type === 'notification').length, 1);
    assert.equal((await history(ok)).length, 0);
    // Data below the threshold: the alerting one resolves.
    s.clock.advance(minute);
    await ingest('t3', { a: 1 }, { ms: 5 });
    await evaluate(0);
    await receiver.waitFor(2);
    assert.equal(bodies(receiver)[1]!.status, 'resolved');
    await s.request('DELETE', `/monitors/${alerting}`);
    await s.request('DELETE', `/monitors/${ok}`);
  });

  test('repeat re-sends while firing; muted_until silences until the mute ends', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ q: 'event == "t4" stats count()', condition: { op: '>', value: 0 }, repeat: '2m', channel_ids: [ch] });
    await ingest('t4', { a: 1 });
    await evaluate(0);
    await receiver.waitFor(1);
    s.clock.advance(minute);
    await ingest('t4', { a: 1 });
    await evaluate(0);
    assert.equal((await history(id)).filter((h) => h.type === 'notification').length, 1, 'not again before repeat');
    s.clock.advance(minute);
    await ingest('t4', { a: 1 });
    await evaluate(0);
    await receiver.waitFor(2);
    assert.deepEqual(bodies(receiver).map((b) => b.status), ['firing', 'firing']);

    const [ch2, muted] = await channel();
    const mutedId = await monitor({ q: 'event == "t4" stats count()', condition: { op: '>', value: 0 }, channel_ids: [ch2], muted_until: new Date(s.clock.now() + 10 * minute).toISOString() });
    await ingest('t4', { a: 1 });
    await evaluate(0);
    assert.deepEqual((await history(mutedId)).map((h) => h.type + ':' + (h.to ?? '')), ['state_change:firing'], 'the state changes, nothing is sent');
    const unmuted = await s.request('PATCH', `/monitors/${mutedId}`, { json: { muted_until: null } });
    assert.equal(unmuted.status, 200, unmuted.text);
    await ingest('t4', { a: 1 });
    await evaluate(1_000);
    await muted.waitFor(1);
    assert.equal(bodies(muted)[0]!.status, 'firing', 'a group still firing is notified once the mute ends');
    await s.request('DELETE', `/monitors/${id}`);
    await s.request('DELETE', `/monitors/${mutedId}`);
  });

  test('runs on the events engine of the test leg (ClickHouse when OPS_TEST_CLICKHOUSE_URL is set, else DuckDB)', () => {
    assert.equal(Boolean(s.server.ctx.config.eventsClickHouseUrl), Boolean(process.env.OPS_TEST_CLICKHOUSE_URL));
  });

  test('groups by a payload number, a missing payload value and severity fire with their own events; an avg over events without the field is no data', async () => {
    const [ch, receiver] = await channel();
    const byShard = await monitor({ q: 'event == "t6" stats count() by payload.shard', condition: { op: '>', value: 1 }, channel_ids: [ch] });
    await ingest('t6', { a: 2 }, { shard: 1 });
    await ingest('t6', { b: 1 }, { shard: 2 });
    await ingest('t6', { c: 2 }, {});
    await evaluate(0);
    await receiver.waitFor(2);
    const fired = bodies(receiver)
      .map((b) => ({ group: b.group as Record<string, unknown>, value: b.value, sources: (b.events as Array<{ source: string }>).map((e) => e.source).sort() }))
      .sort((x, y) => String(x.group['payload.shard']).localeCompare(String(y.group['payload.shard'])));
    assert.deepEqual(fired, [
      { group: { 'payload.shard': 1 }, value: 2, sources: ['a', 'a'] },
      { group: { 'payload.shard': null }, value: 2, sources: ['c', 'c'] },
    ]);
    // The next interval sees the same groups (same keys): still firing, nothing sent again.
    await evaluate(1_000);
    assert.equal((await history(byShard)).filter((h) => h.type === 'state_change').length, 2);

    const [ch2, second] = await channel();
    const bySeverity = await monitor({ q: 'event == "t6" stats count() by severity', condition: { op: '>=', value: 5 }, channel_ids: [ch2] });
    const avg = await monitor({ q: 'event == "t6" stats avg(payload.ms)', condition: { op: '>', value: 1 }, no_data: 'alerting', channel_ids: [ch2] });
    await evaluate(1_000);
    await second.waitFor(2);
    const [severity, noData] = bodies(second).sort((x, y) => Object.keys(y.group).length - Object.keys(x.group).length);
    assert.deepEqual([severity!.group, severity!.value, severity!.events.length], [{ severity: 'error' }, 5, 5]);
    assert.deepEqual([noData!.status, noData!.group, noData!.value], ['firing', {}, null]);
    for (const id of [byShard, bySeverity, avg]) await s.request('DELETE', `/monitors/${id}`);
  });

  test("history of another tenant's monitor is not found", async () => {
    const id = await monitor({ q: 'stats count()', condition: { op: '>', value: 1e9 }, channel_ids: [] });
    assert.equal((await s.request('GET', `/monitors/${id}/history`, { token: s.tenants.b.token })).status, 404);
    await s.request('DELETE', `/monitors/${id}`);
  });
});

describe('POST /monitors/preview', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ monitors: { tickMs: 3_600_000 } });
  });
  after(() => s.close());

  test('points by bin(every) per group, and the runs of bins over the condition as firings', async () => {
    const base = Math.floor(s.clock.now() / minute) * minute - 10 * minute;
    // eu-1: 7 errors in each of two consecutive minutes; eu-2: 2 in one.
    const events = [0, 1].flatMap((m) => Array.from({ length: 7 }, () => ({ ts: new Date(base + m * minute + 1_000).toISOString(), event: 'p', source: 'eu-1' })));
    events.push(...Array.from({ length: 2 }, () => ({ ts: new Date(base + 1_000).toISOString(), event: 'p', source: 'eu-2' })));
    assert.equal((await s.request('POST', '/datasets/app/ingest', { json: events })).status, 200);
    const viewer = await s.token(s.tenants.a, ['monitors:read']);
    const res = await s.request('POST', '/monitors/preview', { token: viewer, json: { q: 'event == "p" stats count() by source', window: '1m', condition: { op: '>', value: 5 } } });
    assert.equal(res.status, 200, res.text);
    const points = res.body.points as Array<{ ts: string; group: { source: string }; value: number }>;
    assert.deepEqual(points.filter((p) => p.group.source === 'eu-1').map((p) => [p.ts, p.value]), [[new Date(base).toISOString(), 7], [new Date(base + minute).toISOString(), 7]]);
    assert.deepEqual(res.body.firings, [{ group: { source: 'eu-1' }, from: new Date(base).toISOString(), to: new Date(base + 2 * minute).toISOString() }]);
    const delayed = await s.request('POST', '/monitors/preview', { json: { q: 'event == "p" stats count() by source', condition: { op: '>', value: 5 }, for: '2m' } });
    assert.deepEqual(delayed.body.firings, [], 'two minutes over it never lasts longer than for = 2m');
    assert.equal((await s.request('POST', '/monitors/preview', { json: { q: 'event == "p"', condition: { op: '>', value: 5 } } })).body.error.code, 'soql_parse_error');
  });
});
