import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReceiver, eventually } from '../test-support/notifications/test-receiver.js';
import { call, postAlone, processStore, workers } from '../test-support/notifications/test-processes.js';
import type { NotificationBody } from '../test-support/monitors/test-monitors.js';

type Body = NotificationBody;

test('serve --workers 2 on one store: every threshold firing is notified once, and every matched event once whichever worker took its ingest', { timeout: 240_000 }, async () => {
  const store = await processStore('ops-monitors-workers-');
  const receiver = await startReceiver([{ status: 200 }]);
  // A receiver left listening keeps the file alive until the runner's timeout: closed if the workers do not start.
  const servers = await workers(store).catch(async (error: unknown) => {
    await receiver.close();
    throw error;
  });
  const { port } = servers;
  const ctx = await store.open();
  try {
    const api = (method: string, urlPath: string, json?: unknown) => call(port, store.token, method, urlPath, json);
    const channel = await api('POST', '/channels', { name: 'hook', kind: 'webhook', url: receiver.url });
    assert.equal(channel.status, 201, channel.text);

    // The match monitor first: neither worker has read the tenant's match monitors yet, so both read it at their first append.
    const match = await api('POST', '/monitors', { name: 'flags', kind: 'match', q: 'event:flag', channel_ids: [channel.body.id], group_window: '1s' });
    assert.equal(match.status, 201, match.text);
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) {
      const message = `flag-${i}`;
      assert.equal(await postAlone(port, store.token, '/datasets/app/ingest', [{ event: 'flag', message }]), 200);
      sent.push(message);
      await new Promise((r) => setTimeout(r, 100));
    }

    // Threshold monitors over events ingested before them: each due at once, taken by either worker's scheduler.
    const now = Date.now();
    const events = ['eu-1', 'eu-2', 'us-1'].flatMap((source) => Array.from({ length: 3 }, () => ({ ts: new Date(now - 1_000).toISOString(), event: 'err', source })));
    assert.equal((await api('POST', '/datasets/app/ingest', events)).status, 200);
    const thresholds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await api('POST', '/monitors', { name: `t${i}`, kind: 'threshold', q: 'event:err stats count() by source', window: '5m', every: '1m', condition: { op: '>', value: 2 }, channel_ids: [channel.body.id] });
      assert.equal(res.status, 201, res.text);
      thresholds.push(res.body.id);
    }

    const bodies = () => receiver.received.map((r) => JSON.parse(r.body) as Body);
    // 6 monitors × 3 sources firing, and the match notifications until all 20 events are counted.
    await eventually(
      async () => bodies(),
      (list) => list.filter((b) => b.monitor.kind === 'threshold').length >= 18 && list.filter((b) => b.monitor.kind === 'match').reduce((n, b) => n + b.events_total, 0) >= 20,
      90_000,
    );
    // Room for a second notification of any of them to arrive (a grouped window is 1 s; the scheduler ticks every 5 s).
    await new Promise((r) => setTimeout(r, 7_000));
    const all = bodies();
    const ids = receiver.received.map((r) => String(r.headers['x-ops-delivery-id']));
    assert.equal(new Set(ids).size, ids.length, 'no notification was sent twice');

    const firings = all.filter((b) => b.monitor.kind === 'threshold');
    const perGroup = new Map<string, number>();
    for (const b of firings) perGroup.set(`${b.monitor.id} ${JSON.stringify(b.group)}`, (perGroup.get(`${b.monitor.id} ${JSON.stringify(b.group)}`) ?? 0) + 1);
    assert.equal(perGroup.size, 18, 'every monitor fired for every source');
    assert.ok([...perGroup.values()].every((n) => n === 1), 'each firing notified exactly once');
    assert.ok(firings.every((b) => b.status === 'firing' && b.value === 3));
    const changes = await ctx.metadata.db.selectFrom('monitor_changes').select(['monitor_id', 'to_state']).execute();
    assert.equal(changes.length, 18, 'each group changed state once: no interval was evaluated twice');

    const matched = all.filter((b) => b.monitor.kind === 'match');
    assert.equal(matched.reduce((n, b) => n + b.events_total, 0), 20, 'every matched event counted once');
    const messages = matched.flatMap((b) => b.events.map((e) => e.message!));
    assert.equal(new Set(messages).size, messages.length, 'no event notified twice');
    assert.ok(messages.every((m) => sent.includes(m)));
  } finally {
    await servers.close();
    await ctx.close();
    await receiver.close();
    await store.drop();
  }
});

test("serve --workers 2: monitors created at once through both workers never pass the plan's cap", { timeout: 240_000 }, async () => {
  const store = await processStore('ops-monitors-cap-');
  const setup = await store.open();
  await setup.orgs.setPlan(store.tenant.orgId, 'free'); // 3 monitors
  await setup.close();
  const servers = await workers(store);
  const ctx = await store.open();
  try {
    for (let round = 0; round < 3; round++) {
      // 16 creations at once, each on a connection of its own: both workers count and insert at the same time.
      const statuses = await Promise.all(
        Array.from({ length: 16 }, (_, i) => postAlone(servers.port, store.token, '/monitors', { name: `m${round}-${i}`, kind: 'match', q: 'event:x', channel_ids: [] })),
      );
      assert.deepEqual([statuses.filter((x) => x === 201).length, statuses.filter((x) => x === 402).length], [3, 13], `round ${round}: ${statuses.join(' ')}`);
      const rows = await ctx.metadata.db.selectFrom('monitors').select('id').execute();
      assert.equal(rows.length, 3);
      for (const { id } of rows) assert.equal((await call(servers.port, store.token, 'DELETE', `/monitors/${id}`)).status, 200);
    }
  } finally {
    await servers.close();
    await ctx.close();
    await store.drop();
  }
});
