import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { AppError } from '../errors/app-error.js';

describe('quota counters', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ plan: 'free' });
  });
  after(() => s.close());

  test('concurrent consumers never pass the limit together', async () => {
    const { quotas } = s.server.ctx;
    const org = s.tenants.a.orgId;
    // free: 10,000 queries a month; 40 concurrent requests of 300 → exactly 33 fit.
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => quotas.consume(org, 'free', 'queries_month', 300)));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    assert.equal(ok, 33);
    const usage = await quotas.usage(org, 'free');
    assert.equal(usage.find((q) => q.metric === 'queries_month')!.used, 9_900);
  });

  test('an overrun is 402 quota_exceeded with metric and quotas, and changes nothing', async () => {
    const { quotas } = s.server.ctx;
    const org = s.tenants.a.orgId;
    await assert.rejects(quotas.consume(org, 'free', 'queries_month', 101), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.status, 402);
      assert.equal(error.code, 'quota_exceeded');
      assert.equal(error.extra.metric, 'queries_month');
      assert.deepEqual((error.extra.quotas as Array<{ metric: string }>).map((q) => q.metric), ['storage_bytes', 'events_month', 'queries_month']);
      return true;
    });
    await quotas.consume(org, 'free', 'queries_month', 100);
    await quotas.release(org, 'queries_month', 50);
    assert.equal((await quotas.usage(org, 'free')).find((q) => q.metric === 'queries_month')!.used, 9_950);
  });

  test('monthly counters start again in a new month; cumulative ones do not', async () => {
    const { quotas } = s.server.ctx;
    const org = s.tenants.a.orgId;
    await quotas.consume(org, 'free', 'storage_bytes', 1234);
    s.clock.advance(32 * 86_400_000);
    try {
      const usage = await quotas.usage(org, 'free');
      assert.equal(usage.find((q) => q.metric === 'queries_month')!.used, 0);
      assert.equal(usage.find((q) => q.metric === 'storage_bytes')!.used, 1234);
    } finally {
      s.clock.advance(-32 * 86_400_000);
    }
  });

  test('a charge larger than the whole limit is refused before anything is written; unlimited plans take any charge', async () => {
    const { quotas, plans } = s.server.ctx;
    const org = s.tenants.b.orgId;
    const limit = plans.limits('free').events_month!;
    await assert.rejects(quotas.consume(org, 'free', 'events_month', limit + 1), (error: unknown) => error instanceof AppError && error.status === 402);
    assert.equal((await quotas.usage(org, 'free')).find((q) => q.metric === 'events_month')!.used, 0);
    // Exactly the limit fits, in a first charge of the period (the insert arm of the upsert).
    await quotas.consume(org, 'free', 'events_month', limit);
    await assert.rejects(quotas.consume(org, 'free', 'events_month', 1), (error: unknown) => error instanceof AppError && error.code === 'quota_exceeded');
    // enterprise has no events_month limit (DECISIONS §8): any charge passes.
    assert.equal(plans.limits('enterprise').events_month, null);
    await quotas.consume(org, 'enterprise', 'events_month', 2 ** 40);
    await quotas.consume(org, 'enterprise', 'events_month', 1);
  });
});
