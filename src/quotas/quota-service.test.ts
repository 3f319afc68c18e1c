import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { AppError } from '../errors/app-error.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QuotaService } from './quota-service.js';

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

describe('query charges in blocks (allowance.ts)', () => {
  let s: TestServer;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-plans-'));
    const file = path.join(dir, 'plans.json');
    const small = { max_file_bytes: 1_000_000, storage_bytes: null, datasets: 5, retention_days: 7, live_tail: false, events_month: null, queries_month: 100 };
    fs.writeFileSync(file, JSON.stringify({ plans: { small } }));
    s = await startTestServer({ plan: 'small', env: { OPS_PLANS_FILE: file } });
  });
  after(async () => {
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const stored = async (orgId: string) => {
    const row = await s.server.ctx.metadata.db.selectFrom('usage_counters').select('used').where('org_id', '=', orgId).where('metric', '=', 'queries_month').executeTakeFirst();
    return Number(row?.used ?? 0);
  };
  const used = async (token?: string) => {
    const r = await s.request('GET', '/usage', token ? { token } : {});
    assert.equal(r.status, 200, r.text);
    return (r.body.quotas as Array<{ metric: string; used: number }>).find((q) => q.metric === 'queries_month')!.used;
  };

  test('a burst of queries is charged ahead in blocks, /usage stays exact, and the rest is given back once idle', async () => {
    const org = s.tenants.a.orgId;
    for (let k = 0; k < 20; k++) assert.equal((await s.request('POST', '/query', { json: { q: '' } })).status, 200);
    // Blocks of 1, 2, 4, 8, 16: 31 units charged for 20 queries, 11 held by this process.
    assert.ok((await stored(org)) > 20, `charged ahead: ${await stored(org)}`);
    assert.equal(await used(), 20);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal(await stored(org), 20);
    assert.equal(await used(), 20);
  });

  test('the limit stays exact: a block that does not fit falls back to one unit, and concurrent queries never pass it', async () => {
    const org = s.tenants.a.orgId;
    const before = await used();
    const results = await Promise.all(Array.from({ length: 120 }, () => s.request('POST', '/query', { json: { q: '' } })));
    const ok = results.filter((r) => r.status === 200).length;
    assert.equal(ok, 100 - before);
    for (const r of results.filter((r) => r.status !== 200)) {
      assert.equal(r.status, 402);
      assert.equal(r.body.error.code, 'quota_exceeded');
    }
    assert.equal(await stored(org), 100);
    assert.equal(await used(), 100);
  });

  test('a second process charging the same organisation never passes the limit with this one; closing gives units back', async () => {
    const org = s.tenants.b.orgId;
    const { metadata, plans, clock } = s.server.ctx;
    const other = new QuotaService(metadata.db, plans, clock);
    const mine = s.server.ctx.quotas;
    let ok = 0;
    let refused = 0;
    const take = (quotas: QuotaService) =>
      quotas.chargeQuery(org, 'small').then(
        () => ok++,
        (error: unknown) => {
          assert.ok(error instanceof AppError && error.code === 'quota_exceeded');
          refused++;
        },
      );
    for (let round = 0; round < 15; round++) await Promise.all([take(mine), take(other), take(mine), take(other), take(mine), take(other), take(mine), take(other)]);
    assert.equal(ok + refused, 120);
    assert.ok(ok <= 100 && ok >= 100 - 64, `${ok} charged`);
    await other.close();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    // Everything held was given back: the counter is what was used.
    assert.equal(await stored(org), ok);
  });
});
