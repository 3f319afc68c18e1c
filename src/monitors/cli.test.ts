import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from '../test-support/test-server.js';
import { monitorsTestServer } from '../test-support/monitors/test-monitors.js';
import { opsctl as runOpsctlOn } from '../test-support/opsctl.js';

describe('opsctl monitor list|create|mute, channel list|test, while the server runs', () => {
  const server = monitorsTestServer();
  let s: TestServer;
  before(() => {
    s = server.s;
  });

  /** opsctl in this process on the test server's stores, allowed to reach the loopback receivers. */
  const opsctl = (args: string[]) => runOpsctlOn(s, args, { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' });
  const tenantA = () => ['--org', s.tenants.a.orgId, '--project', s.tenants.a.projectId];

  test('channel list and test; monitor create (match), list, and its match reaches the channel', async () => {
    const [ch, receiver] = await server.channel(undefined, 'cli hook');

    const channels = await opsctl(['channel', 'list', ...tenantA(), '--json']);
    assert.equal(channels.code, 0, channels.stderr);
    assert.ok(channels.json.channels.some((c: { id: string; name: string }) => c.id === ch && c.name === 'cli hook'));
    const table = await opsctl(['channel', 'list', ...tenantA()]);
    assert.match(table.stdout, /cli hook/);
    // The test-mode tenant of the same project has none of them.
    const testMode = await opsctl(['channel', 'list', ...tenantA(), '--mode', 'test', '--json']);
    assert.ok(!testMode.json.channels.some((c: { id: string }) => c.id === ch));

    const sent = await opsctl(['channel', 'test', ...tenantA(), '--id', ch, '--json']);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(sent.json.channel_id, ch);
    const [first] = await receiver.waitFor(1, 10_000);
    assert.equal(JSON.parse(first!.body).status, 'test');
    assert.equal(first!.headers['x-ops-delivery-id'], sent.json.delivery_id);

    const created = await opsctl(['monitor', 'create', ...tenantA(), '--name', 'cli flags', '--kind', 'match', '--q', 'event == "cli.flag"', '--channel', `${ch}, ${ch}`, '--group-window', '5s', '--json']);
    assert.equal(created.code, 0, created.stderr + created.stdout);
    assert.equal(created.json.kind, 'match');
    assert.deepEqual(created.json.channel_ids, [ch]);
    assert.equal(created.json.group_window, '5s');
    const listed = await opsctl(['monitor', 'list', ...tenantA(), '--json']);
    const mine = listed.json.monitors.find((m: { id: string }) => m.id === created.json.id);
    // With its status, as GET /v1/monitors shows it.
    assert.deepEqual(mine?.status, (await s.request('GET', `/monitors/${created.json.id}`)).body.status);
    assert.equal(mine.status.state, 'watching');
    assert.match((await opsctl(['monitor', 'list', ...tenantA()])).stdout, /cli flags.*watching/);

    // The server sees the monitor within its match cache's TTL (5 s).
    const deadline = Date.now() + 15_000;
    while (receiver.received.length < 2 && Date.now() < deadline) {
      await s.request('POST', '/datasets/app/ingest', { json: [{ event: 'cli.flag', message: 'seen' }] });
      await new Promise((r) => setTimeout(r, 500));
    }
    const [, second] = await receiver.waitFor(2, 1_000);
    const body = JSON.parse(second!.body);
    assert.equal(body.status, 'firing');
    assert.equal(body.monitor.id, created.json.id);
  });

  test('monitor create (threshold) takes --condition "OP N" and the schedule; mute --for / --until / --for 0s', async () => {
    const ch = (await s.request('POST', '/channels', { json: { name: 'h', kind: 'webhook', url: 'http://127.0.0.1:9/hook' } })).body.id as string;
    const created = await opsctl(['monitor', 'create', ...tenantA(), '--name', 'errors', '--kind', 'threshold', '--q', 'severity >= error stats count() by source', '--channel', ch, '--window', '5m', '--condition', '>= 10', '--for', '1m', '--no-data', 'alerting', '--json']);
    assert.equal(created.code, 0, created.stderr + created.stdout);
    assert.deepEqual(created.json.condition, { op: '>=', value: 10 });
    assert.equal(created.json.window, '5m');
    assert.equal(created.json.for, '1m');
    assert.equal(created.json.no_data, 'alerting');
    const id = created.json.id as string;

    const muted = await opsctl(['monitor', 'mute', ...tenantA(), '--id', id, '--for', '2h', '--json']);
    assert.equal(muted.code, 0, muted.stderr);
    // opsctl runs on the system clock, not the test server's.
    assert.ok(Math.abs(Date.parse(muted.json.muted_until) - Date.now() - 2 * 3_600_000) < 5_000, muted.json.muted_until);
    const until = await opsctl(['monitor', 'mute', ...tenantA(), '--id', id, '--until', '2030-01-02T03:04:05Z', '--json']);
    assert.equal(until.json.muted_until, '2030-01-02T03:04:05.000Z');
    assert.equal((await s.request('GET', `/monitors/${id}`)).body.muted_until, '2030-01-02T03:04:05.000Z');
    const unmuted = await opsctl(['monitor', 'mute', ...tenantA(), '--id', id, '--for', '0s', '--json']);
    assert.equal(unmuted.json.muted_until, null);

    // Refusals: exit 1 with the API's error; a missing required flag is exit 2.
    const both = await opsctl(['monitor', 'mute', ...tenantA(), '--id', id, '--for', '1h', '--until', '2030-01-01T00:00:00Z', '--json']);
    assert.equal(both.code, 1);
    assert.equal(both.json.error.code, 'bad_request');
    const badCondition = await opsctl(['monitor', 'create', ...tenantA(), '--name', 'x', '--kind', 'threshold', '--q', 'stats count()', '--channel', ch, '--window', '5m', '--condition', 'over 5', '--json']);
    assert.equal(badCondition.code, 1);
    assert.match(badCondition.json.error.message, /--condition/);
    const badWindow = await opsctl(['monitor', 'create', ...tenantA(), '--name', 'x', '--kind', 'threshold', '--q', 'stats count()', '--channel', ch, '--window', '2d', '--condition', '> 5', '--json']);
    assert.equal(badWindow.code, 1);
    assert.match(badWindow.json.error.message, /window/);
    const foreign = await opsctl(['monitor', 'mute', '--org', s.tenants.b.orgId, '--project', s.tenants.b.projectId, '--id', id, '--for', '1h', '--json']);
    assert.equal(foreign.code, 1);
    assert.equal(foreign.json.error.code, 'not_found');
    assert.equal((await opsctl(['monitor', 'create', ...tenantA(), '--name', 'x', '--kind', 'match', '--q', 'x'])).code, 2, '--channel is required');
    await s.request('DELETE', `/monitors/${id}`);
  });
});
