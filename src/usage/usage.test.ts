import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

describe('usage and billing', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('GET /usage reports every quota metric of the plan and the current month', async () => {
    const res = await s.request('GET', '/usage');
    assert.equal(res.status, 200);
    assert.equal(res.body.plan, 'pro');
    assert.match(res.body.period_start, /^\d{4}-\d\d-01T00:00:00\.000Z$/);
    assert.deepEqual(
      res.body.quotas.map((q: { metric: string; cumulative: boolean; limit: number }) => [q.metric, q.cumulative, q.limit]),
      [
        ['storage_bytes', true, 250_000_000_000],
        ['events_month', false, 500_000_000],
        ['queries_month', false, 1_000_000],
        ['monitors', true, 100],
      ],
    );
  });

  test("the monitors quota counts the organisation's monitors in every project and mode against the plan's cap", async () => {
    const monitors = async (token?: string) => (await s.request('GET', '/usage', { token })).body.quotas.find((q: { metric: string }) => q.metric === 'monitors');
    const before = (await monitors()).used;
    for (const tenant of [s.tenants.a, s.tenants.aTest]) {
      const created = await s.request('POST', '/monitors', { token: tenant.token, json: { name: `usage ${tenant.mode}`, kind: 'match', q: 'event:x', channel_ids: [] } });
      assert.equal(created.status, 201, created.text);
    }
    assert.deepEqual(await monitors(), { metric: 'monitors', used: before + 2, limit: 100, cumulative: true });
    // Organisation B (free plan) has none of A's, and its own cap.
    assert.deepEqual(await monitors(s.tenants.b.token), { metric: 'monitors', used: 0, limit: 3, cumulative: true });
  });

  test('usage is per organisation: B sees its own plan and counters', async () => {
    await s.server.ctx.quotas.consume(s.tenants.a.orgId, 'pro', 'queries_month', 7);
    const a = await s.request('GET', '/usage');
    const b = await s.request('GET', '/usage', { token: s.tenants.b.token });
    assert.equal(a.body.quotas[2].used, 7);
    assert.equal(b.body.plan, 'free');
    assert.equal(b.body.quotas[2].used, 0);
  });

  test('GET /billing reports the plan limits; a plan change shows within the token cache time (1 s)', async () => {
    const res = await s.request('GET', '/billing', { token: s.tenants.b.token });
    assert.equal(res.body.plan, 'free');
    assert.deepEqual(res.body.plan_limits, {
      max_file_bytes: 10_000_000,
      storage_bytes: 1_000_000_000,
      datasets: 3,
      retention_days: 7,
      live_tail: false,
      events_month: 1_000_000,
      queries_month: 10_000,
      monitors: 3,
    });
    await s.server.ctx.orgs.setPlan(s.tenants.b.orgId, 'enterprise');
    const changedAt = Date.now();
    let after = await s.request('GET', '/billing', { token: s.tenants.b.token });
    while (after.body.plan !== 'enterprise' && Date.now() - changedAt < 3_000) {
      await new Promise((r) => setTimeout(r, 100));
      after = await s.request('GET', '/billing', { token: s.tenants.b.token });
    }
    assert.ok(Date.now() - changedAt < 2_000, 'the plan change took longer than the token cache');
    assert.equal(after.body.plan, 'enterprise');
    assert.equal(after.body.plan_limits.events_month, null);
  });

  test('scopes: usage:read and billing:read', async () => {
    const token = await s.token(s.tenants.a, ['media:read']);
    assert.equal((await s.request('GET', '/usage', { token })).body.error.required_scope, 'usage:read');
    assert.equal((await s.request('GET', '/billing', { token })).body.error.required_scope, 'billing:read');
  });
});
