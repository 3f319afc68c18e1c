import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { eventually, startReceiver, type Answer } from '../test-support/notifications/test-receiver.js';
import { verifySignature } from './signature.js';
import { Agent, request as get } from 'undici';

const gif = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

describe('notification delivery (real receivers on 127.0.0.1)', () => {
  let s: TestServer;
  const receivers: Array<{ close(): Promise<void> }> = [];
  before(async () => {
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' }, notifications: { timeoutMs: 500, backoffBaseMs: 200 } });
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await s.close();
  });
  const receiver = async (script: Parameters<typeof startReceiver>[0]) => {
    const r = await startReceiver(script);
    receivers.push(r);
    return r;
  };
  const channel = async (kind: string, url: string, token = s.tenants.a.token) => {
    const r = await s.request('POST', '/channels', { token, json: { name: `${kind} channel`, kind, url } });
    assert.equal(r.status, 201, r.text);
    return r.body as { id: string; signing_secret?: string };
  };
  const sendTest = async (channelId: string) => {
    const r = await s.request('POST', `/channels/${channelId}/test`);
    assert.equal(r.status, 202, r.text);
    return r.body.delivery_id as string;
  };
  const deliveries = async (channelId: string) => (await s.request('GET', `/channels/${channelId}/deliveries`)).body.deliveries as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const settled = (channelId: string, count = 1) => eventually(() => deliveries(channelId), (list) => list.length >= count && list.every((d) => d.state !== 'pending'));

  test('a webhook request carries the §18 body, X-Ops-Delivery-Id and a signature that checks with the secret (and not with another)', async () => {
    const r = await receiver([{ status: 200 }]);
    const hook = await channel('webhook', r.url);
    const id = await sendTest(hook.id);
    const [request] = await r.waitFor(1);
    assert.equal(request!.headers['x-ops-delivery-id'], id);
    assert.equal(request!.headers['content-type'], 'application/json');
    const now = Math.floor(Date.now() / 1000);
    assert.match(String(request!.headers['x-ops-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.ok(verifySignature(hook.signing_secret!, request!.body, String(request!.headers['x-ops-signature']), now));
    assert.ok(!verifySignature('whsec_wrong', request!.body, String(request!.headers['x-ops-signature']), now), 'a wrong secret fails');
    assert.ok(!verifySignature(hook.signing_secret!, `${request!.body} `, String(request!.headers['x-ops-signature']), now), 'a changed body fails');
    const body = JSON.parse(request!.body);
    assert.equal(body.version, '1');
    assert.equal(body.delivery_id, id);
    assert.equal(body.status, 'test');
    assert.deepEqual(body.monitor, { id: hook.id, name: 'Test of channel "webhook channel"', kind: 'test' });
    for (const key of ['group', 'value', 'condition', 'window', 'started_at', 'events_total', 'events', 'url']) assert.ok(key in body, key);
    const [listed] = await settled(hook.id);
    assert.equal(listed!.id, id);
    assert.equal(listed!.state, 'delivered');
    assert.equal(listed!.attempts.length, 1);
    assert.equal(listed!.attempts[0].status, 200);
    assert.equal(typeof listed!.attempts[0].latency_ms, 'number');
  });

  test('5xx then 200: one notification, the same delivery id on both requests, two attempts listed', async () => {
    const r = await receiver([{ status: 503, body: 'busy' }, { status: 200 }]);
    const hook = await channel('webhook', r.url);
    const id = await sendTest(hook.id);
    const [first, second] = await r.waitFor(2);
    assert.equal(first!.headers['x-ops-delivery-id'], id);
    assert.equal(second!.headers['x-ops-delivery-id'], id);
    assert.equal(JSON.parse(second!.body).delivery_id, id);
    const list = await settled(hook.id);
    assert.equal(list.length, 1);
    assert.equal(list[0]!.state, 'delivered');
    assert.deepEqual(list[0]!.attempts.map((a: { status: number }) => a.status), [503, 200]);
    assert.equal(list[0]!.attempts[0].error, 'HTTP 503 Service Unavailable', "the status in words, nothing of the receiver's answer");
    assert.equal(list[0]!.attempt_count, 2);
  });

  test('404 fails at once: one request, state failed', async () => {
    const r = await receiver([{ status: 404, body: '{"message":"Unknown Webhook"}' }]);
    const hook = await channel('webhook', r.url);
    await sendTest(hook.id);
    const [listed] = await settled(hook.id);
    assert.equal(listed!.state, 'failed');
    assert.equal(listed!.attempts.length, 1);
    assert.equal(listed!.last_error, 'HTTP 404 Not Found');
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(r.received.length, 1, 'never retried');
  });

  test('a redirect is not followed (not even to loopback): failed at once, its target gets nothing', async () => {
    const target = await receiver([{ status: 200 }]);
    const r = await receiver([{ status: 302, headers: { location: target.url } }]);
    const hook = await channel('webhook', r.url);
    await sendTest(hook.id);
    const [listed] = await settled(hook.id);
    assert.equal(listed!.state, 'failed');
    assert.match(listed!.last_error, /redirect not followed/);
    assert.equal(target.received.length, 0);
  });

  test("Discord: an embed body; X-RateLimit-Remaining: 0 and a 429's retry_after are honoured (no request before the time it gave)", async () => {
    const answers: Answer[] = [
      { status: 204, headers: { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '1.0', 'x-ratelimit-bucket': 'abc' } },
      {
        status: 429,
        headers: { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '1.7', 'x-ratelimit-scope': 'user' },
        body: JSON.stringify({ message: 'You are being rate limited.', retry_after: 1.7, global: false }),
      },
      { status: 204 },
    ];
    const r = await receiver(answers);
    const discord = await channel('discord', r.url);
    const a = await sendTest(discord.id);
    await r.waitFor(1);
    const b = await sendTest(discord.id);
    const [one, two, three] = await r.waitFor(3);
    assert.equal(one!.headers['x-ops-delivery-id'], a);
    assert.equal(two!.headers['x-ops-delivery-id'], b);
    assert.equal(three!.headers['x-ops-delivery-id'], b);
    assert.ok(two!.at - one!.at >= 1000, `the bucket's reset was waited for (${two!.at - one!.at} ms)`);
    assert.ok(three!.at - two!.at >= 1700, `retry_after was waited for (${three!.at - two!.at} ms)`);
    const body = JSON.parse(one!.body);
    assert.equal(body.embeds.length, 1);
    assert.match(body.embeds[0].title, /^TEST: /);
    assert.deepEqual(body.allowed_mentions, { parse: [] });
    const list = await settled(discord.id, 2);
    assert.deepEqual(list.find((d) => d.id === b)!.attempts.map((x: { status: number }) => x.status), [429, 204]);
  });

  test('Retry-After (seconds) is honoured over the shorter backoff', async () => {
    const r = await receiver([{ status: 503, headers: { 'retry-after': '2' } }, { status: 200 }]);
    const hook = await channel('webhook', r.url);
    await sendTest(hook.id);
    const [first, second] = await r.waitFor(2);
    assert.ok(second!.at - first!.at >= 2000, `${second!.at - first!.at} ms`);
  });

  test('a receiver that does not answer within the timeout: the attempt is a timeout, retried with the same id', async () => {
    const r = await receiver(['hang', { status: 200 }]);
    const hook = await channel('webhook', r.url);
    const id = await sendTest(hook.id);
    const [first, second] = await r.waitFor(2);
    assert.equal(first!.headers['x-ops-delivery-id'], id);
    assert.equal(second!.headers['x-ops-delivery-id'], id);
    const [listed] = await settled(hook.id);
    assert.equal(listed!.state, 'delivered');
    assert.equal(listed!.attempts[0].status, null);
    assert.match(listed!.attempts[0].error, /timeout/);
    assert.ok(listed!.attempts[0].latency_ms >= 450, String(listed!.attempts[0].latency_ms));
  });

  test('20 failed deliveries in a row disable the channel, which says why; PATCH enables it again', async () => {
    const r = await receiver([{ status: 410 }]);
    const hook = await channel('webhook', r.url);
    for (let i = 0; i < 20; i++) await sendTest(hook.id);
    const disabled = await eventually(
      async () => (await s.request('GET', `/channels/${hook.id}`)).body,
      (c) => c.enabled === false,
    );
    assert.match(disabled.disabled_reason, /20 failed deliveries in a row/);
    assert.equal(disabled.consecutive_failures, 20);
    assert.equal(r.received.length, 20);
    assert.equal((await s.request('POST', `/channels/${hook.id}/test`)).status, 409);
    const enabled = await s.request('PATCH', `/channels/${hook.id}`, { json: { enabled: true } });
    assert.equal(enabled.body.enabled, true);
    assert.equal(enabled.body.consecutive_failures, 0);
  });

  test('enqueue (what monitors call): one row per channel of the tenant, evidence of the same tenant only, the §18 facts as given', async () => {
    const webhook = await receiver([{ status: 200 }]);
    const slack = await receiver([{ status: 200, body: 'ok' }]);
    const hook = await channel('webhook', webhook.url);
    const slackChannel = await channel('slack', slack.url);
    const foreign = await channel('webhook', webhook.url, s.tenants.b.token);
    const mine = await s.request('POST', '/media/base64', { json: { file: gif, filename: 'shot.gif' } });
    const theirs = await s.request('POST', '/media/base64', { token: s.tenants.b.token, json: { file: gif, filename: 'theirs.gif' } });
    assert.equal(mine.status, 201, mine.text);
    const tenant = s.tenants.a;
    const deliveries = await s.server.notifications.notifications.enqueue(tenant, {
      channelIds: [hook.id, slackChannel.id, foreign.id, 'ch_unknown'],
      monitor: { id: 'mon_1', name: 'kicks', kind: 'match' },
      status: 'firing',
      group: { source: 'eu-1' },
      value: 3,
      condition: { op: '>', value: 2 },
      window: { from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T00:05:00.000Z' },
      started_at: '2026-01-01T00:05:00.000Z',
      events_total: 12,
      events: Array.from({ length: 12 }, (_, i) => ({ event: 'player.kick', message: `kick ${i}`, payload: i === 0 ? { nested: { shots: [mine.body.id, theirs.body.id] } } : {} })),
      url: 'https://ops.example/dashboard/explore',
    });
    assert.deepEqual(deliveries.map((d) => d.channel_id).sort(), [hook.id, slackChannel.id].sort());
    const [request] = await webhook.waitFor(1);
    const body = JSON.parse(request!.body);
    assert.equal(body.delivery_id, deliveries.find((d) => d.channel_id === hook.id)!.delivery_id);
    assert.deepEqual(body.monitor, { id: 'mon_1', name: 'kicks', kind: 'match' });
    assert.equal(body.status, 'firing');
    assert.equal(body.events_total, 12);
    assert.equal(body.events.length, 10);
    assert.deepEqual(body.events[0].evidence, [{ id: mine.body.id, url: mine.body.url, filename: 'shot.gif', content_type: 'image/gif' }]);
    assert.equal(body.events[1].evidence, undefined);
    // A connection of its own, closed after: a kept-alive one would hold the delivery listener's close.
    const agent = new Agent();
    const file = await get(body.events[0].evidence[0].url, { dispatcher: agent });
    await file.body.arrayBuffer();
    await agent.close();
    assert.equal(file.statusCode, 200);
    const [slackRequest] = await slack.waitFor(1);
    const blocks = JSON.parse(slackRequest!.body).blocks as Array<{ type: string; image_url?: string }>;
    assert.equal(blocks.find((b) => b.type === 'image')?.image_url, mine.body.url);
    assert.ok(!slackRequest!.body.includes(theirs.body.url) && !slackRequest!.body.includes('theirs.gif'), 'the other tenant\'s file is not evidence');
  });

  test('the purge forgets finished notifications after 30 days, never pending ones', async () => {
    const r = await receiver([{ status: 200 }]);
    const hook = await channel('webhook', r.url);
    await sendTest(hook.id);
    await settled(hook.id);
    assert.equal((await s.server.notifications.purge()).notifications_purged, 0);
    s.clock.advance(31 * 86_400_000);
    assert.ok((await s.server.notifications.purge()).notifications_purged >= 1);
    assert.deepEqual(await deliveries(hook.id), []);
    const { db } = s.server.ctx.metadata;
    const rows = await db.selectFrom('notifications').select(['id', 'state']).execute();
    assert.ok(rows.every((row) => row.state === 'pending'));
    const orphans = await db.selectFrom('notification_attempts').select('id').where('notification_id', 'not in', ['', ...rows.map((row) => row.id)]).execute();
    assert.deepEqual(orphans, [], 'their attempts went with them');
  });
});
