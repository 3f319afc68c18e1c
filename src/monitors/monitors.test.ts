import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

const threshold = { name: 'errors by source', kind: 'threshold', q: 'severity >= error stats count() by source', channel_ids: [] as string[], window: '1m', condition: { op: '>', value: 5 } };

describe('monitors CRUD', () => {
  let s: TestServer;
  let channelId: string;
  before(async () => {
    // A long tick: no evaluation between a create and the GET compared with it (the status would differ).
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' }, monitors: { tickMs: 3_600_000 } });
    const channel = await s.request('POST', '/channels', { json: { name: 'hook', kind: 'webhook', url: 'http://127.0.0.1:9/hook' } });
    channelId = channel.body.id;
  });
  after(() => s.close());

  test('POST → 201 with the defaults; GET, list, PATCH, DELETE', async () => {
    const created = await s.request('POST', '/monitors', { json: { ...threshold, channel_ids: [channelId] } });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.id, /^mon_[0-9A-Z]{26}$/);
    assert.deepEqual(
      { every: created.body.every, for: created.body.for, no_data: created.body.no_data, repeat: created.body.repeat, notify_on_resolve: created.body.notify_on_resolve, muted_until: created.body.muted_until },
      { every: '1m', for: '0s', no_data: 'ok', repeat: '4h', notify_on_resolve: true, muted_until: null },
    );
    assert.equal(created.body.group_window, undefined);
    const id = created.body.id;
    assert.deepEqual((await s.request('GET', `/monitors/${id}`)).body, created.body);
    const list = await s.request('GET', '/monitors');
    assert.ok(list.body.monitors.some((m: { id: string }) => m.id === id));
    const muted = await s.request('PATCH', `/monitors/${id}`, { json: { muted_until: '2099-01-01T00:00:00.000Z', condition: { op: '>=', value: 3 } } });
    assert.equal(muted.status, 200, muted.text);
    assert.equal(muted.body.muted_until, '2099-01-01T00:00:00.000Z');
    assert.deepEqual(muted.body.condition, { op: '>=', value: 3 });
    assert.equal(muted.body.window, '1m');
    assert.equal((await s.request('PATCH', `/monitors/${id}`, { json: { kind: 'match' } })).status, 400);
    assert.deepEqual((await s.request('DELETE', `/monitors/${id}`)).body, { id, deleted: true });
    assert.equal((await s.request('GET', `/monitors/${id}`)).status, 404);
    assert.equal((await s.request('DELETE', `/monitors/${id}`)).status, 404);
  });

  test('a match monitor: group_window defaults to 60s; threshold fields are refused', async () => {
    const created = await s.request('POST', '/monitors', { json: { name: 'flags', kind: 'match', q: 'event:anticheat.flag', channel_ids: [channelId] } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.group_window, '60s');
    assert.equal(created.body.window, undefined);
    const stray = await s.request('POST', '/monitors', { json: { name: 'x', kind: 'match', q: 'event:x', channel_ids: [], window: '5m' } });
    assert.equal(stray.status, 400);
    assert.equal(stray.body.error.field, 'window');
    await s.request('DELETE', `/monitors/${created.body.id}`);
  });

  test('bad input: SOQL errors with their position, every field out of range named', async () => {
    const post = (json: object) => s.request('POST', '/monitors', { json: { ...threshold, ...json } });
    const syntax = await post({ q: 'severity >= ' });
    assert.equal(syntax.status, 400);
    assert.equal(syntax.body.error.code, 'soql_parse_error');
    assert.equal(typeof syntax.body.error.position, 'number');
    const noStats = await post({ q: 'severity >= error' });
    assert.equal(noStats.body.error.code, 'soql_parse_error');
    const two = await post({ q: 'stats count(), avg(payload.ping) by source' });
    assert.equal(two.body.error.code, 'soql_parse_error');
    assert.equal(two.body.error.position, 15);
    const bin = await post({ q: 'stats count() by bin(1m)' });
    assert.equal(bin.body.error.code, 'soql_parse_error');
    const matchStats = await post({ kind: 'match', q: 'stats count()', window: undefined, condition: undefined });
    assert.equal(matchStats.status, 400);
    assert.equal(matchStats.body.error.code, 'soql_tail_aggregation_unsupported');
    for (const [field, value] of [['window', '30s'], ['window', '25h'], ['window', 'soon'], ['every', '2h'], ['every', '30s'], ['for', '2d'], ['repeat', '30s']] as const) {
      const res = await post({ [field]: value, ...(field === 'every' && value === '2h' ? { window: '24h' } : {}) });
      assert.equal(res.status, 400, `${field}=${value}: ${res.text}`);
      assert.equal(res.body.error.field, field, res.text);
    }
    const groupWindow = await s.request('POST', '/monitors', { json: { name: 'm', kind: 'match', q: 'event:x', channel_ids: [], group_window: '2h' } });
    assert.equal(groupWindow.body.error.field, 'group_window');
    assert.equal((await post({ condition: { op: '!=', value: 1 } })).status, 400);
    assert.equal((await post({ window: undefined })).body.error.field, 'window');
    assert.equal((await post({ condition: undefined })).body.error.field, 'condition');
    assert.equal((await post({ muted_until: 'tomorrow' })).status, 400);
  });

  test("tenancy: another tenant's monitor is not found; another tenant's channel is a 400", async () => {
    const created = await s.request('POST', '/monitors', { json: threshold });
    const id = created.body.id;
    for (const tenant of [s.tenants.b, s.tenants.aTest, s.tenants.aOther]) {
      assert.equal((await s.request('GET', `/monitors/${id}`, { token: tenant.token })).status, 404);
      assert.equal((await s.request('PATCH', `/monitors/${id}`, { token: tenant.token, json: { name: 'x' } })).status, 404);
      assert.equal((await s.request('DELETE', `/monitors/${id}`, { token: tenant.token })).status, 404);
      const list = await s.request('GET', '/monitors', { token: tenant.token });
      assert.ok(!list.body.monitors.some((m: { id: string }) => m.id === id));
    }
    const foreign = await s.request('POST', '/monitors', { token: s.tenants.b.token, json: { ...threshold, channel_ids: [channelId] } });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.field, 'channel_ids');
    const patched = await s.request('PATCH', `/monitors/${id}`, { token: s.tenants.a.token, json: { channel_ids: ['ch_01J0000000000000000000000'] } });
    assert.equal(patched.status, 400);
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('a Viewer (monitors:read) reads but cannot write: 403 naming monitors:write', async () => {
    const viewer = await s.token(s.tenants.a, ['monitors:read']);
    assert.equal((await s.request('GET', '/monitors', { token: viewer })).status, 200);
    const refused = await s.request('POST', '/monitors', { token: viewer, json: threshold });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.required_scope, 'monitors:write');
    const none = await s.token(s.tenants.a, ['logs:read']);
    assert.equal((await s.request('GET', '/monitors', { token: none })).status, 403);
  });
});

describe('monitors quota', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ plan: 'free' });
  });
  after(() => s.close());

  test('free allows 3 monitors per organisation (all projects and modes); the 4th → 402 quota_exceeded, metric monitors', async () => {
    for (const tenant of [s.tenants.a, s.tenants.aTest, s.tenants.aOther]) {
      assert.equal((await s.request('POST', '/monitors', { token: tenant.token, json: threshold })).status, 201);
    }
    const over = await s.request('POST', '/monitors', { json: threshold });
    assert.equal(over.status, 402);
    assert.equal(over.body.error.code, 'quota_exceeded');
    assert.equal(over.body.error.metric, 'monitors');
    assert.equal((await s.request('POST', '/monitors', { token: s.tenants.b.token, json: threshold })).status, 201, 'org B has its own');
    const { body } = await s.request('GET', '/monitors');
    await s.request('DELETE', `/monitors/${body.monitors[0].id}`);
    assert.equal((await s.request('POST', '/monitors', { json: threshold })).status, 201, 'a deleted monitor frees its place');
  });
});
