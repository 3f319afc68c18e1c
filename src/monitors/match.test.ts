import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from '../test-support/test-server.js';
import { monitorsTestServer, type Receiver } from '../test-support/monitors/test-monitors.js';

interface Body {
  status: string;
  monitor: { id: string; kind: string };
  events_total: number;
  value: number;
  events: Array<{ event: string; message: string; payload: Record<string, unknown>; evidence?: Array<{ id: string; url: string; filename: string; content_type: string }> }>;
  window: { from: string; to: string };
  url: string;
}
const gif = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('match monitors: events matched as they are ingested, notified at a real receiver', () => {
  const server = monitorsTestServer();
  let s: TestServer;
  before(() => {
    s = server.s;
  });
  const channel = (token?: string) => server.channel(token);
  const monitor = async (json: object, token = s.tenants.a.token): Promise<string> => {
    const res = await s.request('POST', '/monitors', { token, json: { name: 'm', kind: 'match', ...json } });
    assert.equal(res.status, 201, res.text);
    return res.body.id;
  };
  const ingest = async (events: object[], token = s.tenants.a.token) => {
    const res = await s.request('POST', '/datasets/app/ingest', { token, json: events });
    assert.equal(res.status, 200, res.text);
    return Date.now();
  };
  const bodies = (r: Receiver) => r.received.map((x) => JSON.parse(x.body) as Body);

  test('event:anticheat.flag is notified within 2 s of the ingest answer, with the evidence file as a delivery URL', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ name: 'cheaters', q: 'event:anticheat.flag', channel_ids: [ch] });
    const file = await s.request('POST', '/media/base64', { json: { file: gif, filename: 'shot.gif' } });
    assert.equal(file.status, 201, file.text);
    // A first ingest of something else warms nothing in particular: the match must not depend on it.
    const answeredAt = await ingest([
      { event: 'player.join', message: 'no match' },
      { event: 'anticheat.flag', actor: 'p1', message: 'aimbot', payload: { evidence: file.body.id, score: 0.97 } },
    ]);
    const [request] = await receiver.waitFor(1, 5_000);
    assert.ok(request!.at - answeredAt < 2_000, `notified ${request!.at - answeredAt} ms after the answer`);
    const body = bodies(receiver)[0]!;
    assert.equal(body.status, 'firing');
    assert.deepEqual(body.monitor, { id, name: 'cheaters', kind: 'match' });
    assert.equal(body.events_total, 1);
    assert.equal(body.events.length, 1);
    assert.equal(body.events[0]!.event, 'anticheat.flag');
    assert.deepEqual(body.events[0]!.evidence, [{ id: file.body.id, url: file.body.url, filename: 'shot.gif', content_type: 'image/gif' }]);
    assert.match(body.url, /\/dashboard\/\?q=/);
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('50 matches in quick succession: one notification at once, the rest grouped, counts summing to 50', async () => {
    const [ch, receiver] = await channel();
    const id = await monitor({ q: 'event == "burst.hit"', group_window: '1s', channel_ids: [ch] });
    for (let i = 0; i < 50; i++) await ingest([{ event: 'burst.hit', message: `hit ${i}` }]);
    const total = () => bodies(receiver).reduce((n, b) => n + b.events_total, 0);
    const deadline = Date.now() + 10_000;
    while (total() < 50 && Date.now() < deadline) await sleep(100);
    // One more window: nothing more arrives.
    await sleep(1_500);
    const all = bodies(receiver);
    assert.equal(total(), 50);
    assert.equal(all[0]!.events_total, 1, 'the first match goes out alone, at once');
    assert.ok(all.length >= 2 && all.length < 50, `${all.length} notifications`);
    for (const b of all) {
      assert.equal(b.events.length, Math.min(10, b.events_total));
      assert.equal(b.value, b.events_total);
      assert.ok(b.events.every((e) => e.event === 'burst.hit'));
    }
    await s.request('DELETE', `/monitors/${id}`);
  });

  test("tenancy: another tenant's events never match; test-mode events match only test-mode monitors", async () => {
    const [chLive, live] = await channel();
    const [chTest, testMode] = await channel(s.tenants.aTest.token);
    const [chB, b] = await channel(s.tenants.b.token);
    const ids = [
      await monitor({ q: 'event == "tenancy.flag"', channel_ids: [chLive] }),
      await monitor({ q: 'event == "tenancy.flag"', channel_ids: [chTest] }, s.tenants.aTest.token),
      await monitor({ q: 'event == "tenancy.flag"', channel_ids: [chB] }, s.tenants.b.token),
    ];
    await ingest([{ event: 'tenancy.flag', message: 'from b' }], s.tenants.b.token);
    await ingest([{ event: 'tenancy.flag', message: 'from a test' }], s.tenants.aTest.token);
    await ingest([{ event: 'tenancy.flag', message: 'from a live' }], s.tenants.aOther.token);
    await ingest([{ event: 'tenancy.flag', message: 'from a live' }]);
    await Promise.all([live.waitFor(1), testMode.waitFor(1), b.waitFor(1)]);
    await sleep(500);
    assert.deepEqual(bodies(live).map((x) => x.events.map((e) => e.message)), [['from a live']]);
    assert.deepEqual(bodies(testMode).map((x) => x.events.map((e) => e.message)), [['from a test']]);
    assert.deepEqual(bodies(b).map((x) => x.events.map((e) => e.message)), [['from b']]);
    await s.request('DELETE', `/monitors/${ids[0]}`);
    await s.request('DELETE', `/monitors/${ids[1]}`, { token: s.tenants.aTest.token });
    await s.request('DELETE', `/monitors/${ids[2]}`, { token: s.tenants.b.token });
  });

  test('a muted monitor sends nothing; unmuted (PATCH), it matches the next event at once', async () => {
    const [chMuted, muted] = await channel();
    const [chOpen, open] = await channel();
    const mutedId = await monitor({ q: 'event == "mute.flag"', channel_ids: [chMuted], muted_until: new Date(s.clock.now() + 3_600_000).toISOString() });
    const openId = await monitor({ q: 'event == "mute.flag"', channel_ids: [chOpen] });
    await ingest([{ event: 'mute.flag', message: 'while muted' }]);
    await open.waitFor(1);
    await sleep(500);
    assert.equal(muted.received.length, 0);
    const patched = await s.request('PATCH', `/monitors/${mutedId}`, { json: { muted_until: null } });
    assert.equal(patched.status, 200, patched.text);
    await ingest([{ event: 'mute.flag', message: 'after the mute' }]);
    await muted.waitFor(1, 5_000);
    assert.deepEqual(bodies(muted)[0]!.events.map((e) => e.message), ['after the mute']);
    await s.request('DELETE', `/monitors/${mutedId}`);
    await s.request('DELETE', `/monitors/${openId}`);
  });

  test('POST /monitors/{id}/test: 202 with one delivery per channel, a status "test" notification, in the history; Viewer 403, other tenant 404', async () => {
    const [ch1, r1] = await channel();
    const [ch2, r2] = await channel();
    const id = await monitor({ name: 'probe', q: 'event == "never.sent"', channel_ids: [ch1, ch2] });
    const res = await s.request('POST', `/monitors/${id}/test`);
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.monitor_id, id);
    assert.deepEqual(res.body.deliveries.map((d: { channel_id: string }) => d.channel_id).sort(), [ch1, ch2].sort());
    const [request] = await r1.waitFor(1, 5_000);
    await r2.waitFor(1, 5_000);
    const body = JSON.parse(request!.body) as Body & { delivery_id: string };
    assert.equal(body.status, 'test');
    assert.deepEqual(body.monitor, { id, name: 'probe', kind: 'match' });
    assert.equal(body.events_total, 0);
    assert.equal(body.delivery_id, res.body.deliveries.find((d: { channel_id: string }) => d.channel_id === ch1).delivery_id);
    assert.equal(request!.headers['x-ops-delivery-id'], body.delivery_id);
    const history = await s.request('GET', `/monitors/${id}/history`);
    assert.equal(history.body.history.filter((h: { type: string }) => h.type === 'notification').length, 2);
    const viewer = await s.token(s.tenants.a, ['monitors:read']);
    const refused = await s.request('POST', `/monitors/${id}/test`, { token: viewer });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.required_scope, 'monitors:write');
    assert.equal((await s.request('POST', `/monitors/${id}/test`, { token: s.tenants.b.token })).status, 404);
    assert.equal((await s.request('POST', `/monitors/${id}/test`, { token: s.tenants.aTest.token })).status, 404);
    await s.request('DELETE', `/monitors/${id}`);
  });
});
