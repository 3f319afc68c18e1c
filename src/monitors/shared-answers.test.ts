import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../kernel/logger.js';
import { PublicUrls } from '../kernel/public-urls.js';
import { QueryService } from '../query/query-service.js';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import type { TestTenant } from '../test-support/test-server.js';
import { Evaluator } from './evaluator.js';
import { GroupStore } from './group-store.js';
import { monitorsTestServer } from '../test-support/monitors/test-monitors.js';

/**
 * One statement per batch (evaluator.ts `windowValues`): monitors of one tenant with the same
 * `q` and window evaluated in one batch read the window once. Each monitor still gets its own
 * states from its own condition, the same as a monitor whose query is read on its own, and a
 * monitor of another organisation, project or mode with the same query reads its own events.
 * The scheduler here is the server's own kind on the real stores and the real query path; the
 * query service is the monitors' own, wrapped only to count the statements it is asked for.
 */
describe('threshold evaluation: one window read per tenant, query and window in a batch', () => {
  const server = monitorsTestServer();

  test('monitors sharing a read get the states of separate reads, and tenants never share one', async () => {
    const s = server.s;
    const { ctx } = s.server;
    const reads: string[] = [];
    const real = new QueryService({ store: s.server.events.store, datasets: s.server.events.datasets, cursors: ctx.cursors, now: () => s.clock.now(), lane: 'monitors' });
    const counted = {
      run: (tenant: Tenant, query: Parameters<QueryService['run']>[1]) => {
        // The window reads (a firing group's events for its notification are read apart).
        if (query.stats) reads.push(tenantKey(tenant));
        return real.run(tenant, query);
      },
    } as unknown as QueryService;
    const scheduler = new Evaluator(ctx.metadata.db, s.clock, counted, s.server.notifications.notifications, new GroupStore(ctx.metadata.db), new PublicUrls(ctx.config), createLogger(false), 3_600_000);

    const q = 'event == "shared" stats count() by source';
    const create = async (tenant: TestTenant, json: object): Promise<string> => {
      const res = await s.request('POST', '/monitors', { token: tenant.token, json: { name: 'm', kind: 'threshold', q, window: '1m', channel_ids: [], ...json } });
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    const ingest = async (tenant: TestTenant, counts: Record<string, number>) => {
      const ts = new Date(s.clock.now() - 1_000).toISOString();
      const events = Object.entries(counts).flatMap(([source, n]) => Array.from({ length: n }, () => ({ ts, event: 'shared', source })));
      const res = await s.request('POST', '/datasets/app/ingest', { token: tenant.token, json: events });
      assert.equal(res.status, 200, res.text);
    };
    const { a, b, aOther, aTest } = s.tenants;
    const over2 = await create(a, { condition: { op: '>', value: 2 } });
    const over5 = await create(a, { condition: { op: '>', value: 5 } });
    // The same query written otherwise is another statement: the reference of a read of its own.
    const alone = await create(a, { q: 'event == "shared"   stats count() by source', condition: { op: '>', value: 2 } });
    const under5 = await create(a, { condition: { op: '<', value: 5 } });
    // The same q over another window is another read.
    const longer = await create(a, { window: '2m', condition: { op: '>', value: 2 } });
    const ofB = await create(b, { condition: { op: '>', value: 2 } });
    const ofOtherProject = await create(aOther, { condition: { op: '>', value: 2 } });
    const ofTestMode = await create(aTest, { condition: { op: '>', value: 2 } });
    await ingest(a, { 'eu-1': 4, 'eu-2': 7 });
    await ingest(b, { 'eu-1': 9 });
    await ingest(aTest, { 'eu-3': 3 });

    assert.equal(await scheduler.evaluateDue(), 8);
    // a: q over 1m (three monitors), q written otherwise, q over 2m; and one each for b, aOther, aTest.
    assert.equal(reads.length, 6, `statements by tenant: ${reads.join(', ')}`);
    assert.deepEqual(
      [...new Set(reads)].sort(),
      [a, b, aOther, aTest].map((t) => tenantKey(t)).sort(),
    );

    const status = async (tenant: TestTenant, id: string) => {
      const res = await s.request('GET', `/monitors/${id}`, { token: tenant.token });
      assert.equal(res.status, 200, res.text);
      const st = res.body.status as { state: string; groups_firing: number; last_value: number | null; last_evaluated_at: string | null };
      assert.ok(st.last_evaluated_at, 'evaluated');
      return [st.state, st.groups_firing, st.last_value];
    };
    assert.deepEqual(await status(a, over2), ['firing', 2, 7]);
    assert.deepEqual(await status(a, alone), await status(a, over2));
    assert.deepEqual(await status(a, over5), ['firing', 1, 7]);
    // `<`: the value nearest to firing is the lowest; eu-1's 4 is under 5.
    assert.deepEqual(await status(a, under5), ['firing', 1, 4]);
    assert.deepEqual(await status(a, longer), ['firing', 2, 7]);
    assert.deepEqual(await status(b, ofB), ['firing', 1, 9]);
    assert.deepEqual(await status(aOther, ofOtherProject), ['no_data', 0, null]);
    assert.deepEqual(await status(aTest, ofTestMode), ['firing', 1, 3]);
    // The groups each stored are its own tenant's.
    const groups = async (id: string) => (await ctx.metadata.db.selectFrom('monitor_groups').select(['group_key', 'state']).where('monitor_id', '=', id).orderBy('group_key').execute()).map((g) => `${g.group_key} ${g.state}`);
    assert.deepEqual(await groups(over5), ['{"source":"eu-1"} ok', '{"source":"eu-2"} firing']);
    assert.deepEqual(await groups(ofB), ['{"source":"eu-1"} firing']);
    assert.deepEqual(await groups(ofTestMode), ['{"source":"eu-3"} firing']);

    // A minute later (a batch of its own): read again, not served from the previous batch.
    s.clock.advance(60_000);
    await ingest(a, { 'eu-2': 1 });
    reads.length = 0;
    assert.equal(await scheduler.evaluateDue(), 8);
    assert.equal(reads.length, 6);
    assert.deepEqual(await status(a, over2), ['ok', 0, 1]);
    assert.deepEqual(await status(a, alone), await status(a, over2));
    // 2m: the first minute's events and the new one.
    assert.deepEqual(await status(a, longer), ['firing', 2, 8]);
    // b's event left its window: no data, whatever a's monitors read.
    assert.deepEqual(await status(b, ofB), ['no_data', 0, null]);
  });
});
