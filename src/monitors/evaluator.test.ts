import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { createLogger } from '../kernel/logger.js';
import { PublicUrls } from '../kernel/public-urls.js';
import type { QueryService } from '../query/query-service.js';
import { eventually } from '../test-support/notifications/test-receiver.js';
import { Evaluator } from './evaluator.js';
import { GroupStore } from './group-store.js';

/**
 * The scheduler's lease and commit (evaluator.ts) with two schedulers on one metadata store, as
 * two processes have: one of them (A) is held in the middle of its evaluation by a query that
 * answers only when the test says so, while the test moves the clock, lets the other (B) take
 * the monitor, or changes or deletes it. Only a holder's evaluation of the monitor as it was
 * read may store anything. (multi-host.long.test.ts does the same with real processes.)
 */
class HeldQueries {
  private release: (() => void) | undefined;
  private held: Promise<void> | undefined;
  /** The monitor's value in the next answers. */
  value = 0;
  hold(): void {
    this.held = new Promise((resolve) => (this.release = resolve));
  }
  answer(): void {
    this.release?.();
    this.held = undefined;
  }
  async run(_tenant: unknown, query: { stats: unknown }) {
    await this.held;
    return query.stats ? { kind: 'stats', stats: [{ by: {}, values: { 'count()': this.value } }] } : { kind: 'events', events: [] };
  }
}

describe('threshold evaluation: only the lease holder commits, and only for the monitor as it read it', () => {
  let s: TestServer;
  const logs: string[] = [];
  const scheduler = (queries: Pick<HeldQueries, 'run'>, concurrency = 1) => {
    const { ctx } = s.server;
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString('utf8'));
        done();
      },
    });
    return new Evaluator(ctx.metadata.db, s.clock, queries as unknown as QueryService, s.server.notifications.notifications, new GroupStore(ctx.metadata.db), new PublicUrls(ctx.config), createLogger({ level: 'info', stream }), 3_600_000, concurrency);
  };
  before(async () => {
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' }, monitors: { tickMs: 3_600_000 } });
  });
  after(() => s.close());

  const db = () => s.server.ctx.metadata.db;
  const setup = async () => {
    // A channel nobody listens on: its rows are what counts here, not their sending.
    const channel = await s.request('POST', '/channels', { json: { name: 'hook', kind: 'webhook', url: 'http://127.0.0.1:9/hook' } });
    assert.equal(channel.status, 201, channel.text);
    const res = await s.request('POST', '/monitors', { json: { name: 'm', kind: 'threshold', q: 'stats count()', window: '1m', condition: { op: '>', value: 2 }, channel_ids: [channel.body.id] } });
    assert.equal(res.status, 201, res.text);
    const id = res.body.id as string;
    const a = new HeldQueries();
    a.hold();
    const running = scheduler(a).evaluateDue();
    await eventually(() => db().selectFrom('monitors').select('lease_owner').where('id', '=', id).executeTakeFirstOrThrow(), (row) => row.lease_owner !== null);
    return { id, a, running };
  };
  const stored = async (id: string) => ({
    changes: (await db().selectFrom('monitor_changes').select('to_state').where('monitor_id', '=', id).execute()).map((r) => r.to_state),
    groups: (await db().selectFrom('monitor_groups').select('state').where('monitor_id', '=', id).execute()).map((r) => r.state),
    notifications: (await db().selectFrom('notifications').select('status').where('monitor_id', '=', id).execute()).map((r) => r.status),
  });

  test('A outlives its lease, B takes the monitor and fires; A ends with another answer and stores nothing', async () => {
    const { id, a, running } = await setup();
    s.clock.advance(61_000); // A's lease (every = 1m) has ended
    const b = new HeldQueries();
    b.value = 5;
    assert.equal(await scheduler(b).evaluateDue(), 1);
    assert.deepEqual(await stored(id), { changes: ['firing'], groups: ['firing'], notifications: ['firing'] });
    // A read no event: it would store ok and notify a resolve.
    a.value = 0;
    a.answer();
    assert.equal(await running, 0);
    assert.deepEqual(await stored(id), { changes: ['firing'], groups: ['firing'], notifications: ['firing'] });
    assert.ok(logs.some((l) => l.includes('the lease ran out during the evaluation')));
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('a PATCH during the evaluation: the old definition stores nothing, the new one is evaluated at the next tick', async () => {
    const { id, a, running } = await setup();
    s.clock.advance(1);
    assert.equal((await s.request('PATCH', `/monitors/${id}`, { json: { condition: { op: '>', value: 10 } } })).status, 200);
    a.value = 5; // over the old condition, not the new one
    a.answer();
    assert.equal(await running, 0);
    assert.deepEqual(await stored(id), { changes: [], groups: [], notifications: [] });
    assert.ok(logs.some((l) => l.includes('the monitor changed during the evaluation')));
    const row = await db().selectFrom('monitors').select(['lease_owner', 'next_eval_at', 'last_eval_at']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.lease_owner, null);
    assert.ok(Date.parse(row.next_eval_at!) <= s.clock.now(), 'still due now, as the PATCH made it');
    assert.equal(row.last_eval_at, null, 'the status says it was never evaluated: the dropped evaluation stored no time either');
    const b = new HeldQueries();
    b.value = 5;
    assert.equal(await scheduler(b).evaluateDue(), 1);
    assert.deepEqual(await stored(id), { changes: [], groups: ['ok'], notifications: [] });
    assert.equal((await s.request('GET', `/monitors/${id}`)).body.status.last_value, 5);
    b.value = 11;
    s.clock.advance(60_000);
    assert.equal(await scheduler(b).evaluateDue(), 1);
    assert.deepEqual(await stored(id), { changes: ['firing'], groups: ['firing'], notifications: ['firing'] });
    await s.request('DELETE', `/monitors/${id}`);
  });

  test('a monitor deleted during its evaluation leaves no group state and no notification behind', async () => {
    const { id, a, running } = await setup();
    assert.equal((await s.request('DELETE', `/monitors/${id}`)).status, 200);
    a.value = 5;
    a.answer();
    assert.equal(await running, 0);
    assert.deepEqual(await stored(id), { changes: [], groups: [], notifications: [] });
  });

  test('OPS_MONITOR_CONCURRENCY evaluations at a time: each due monitor evaluated and committed once', async () => {
    const channel = await s.request('POST', '/channels', { json: { name: 'hook-c', kind: 'webhook', url: 'http://127.0.0.1:9/hook' } });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await s.request('POST', '/monitors', { json: { name: `c${i}`, kind: 'threshold', q: 'stats count()', window: '1m', condition: { op: '>', value: 2 }, channel_ids: [channel.body.id] } });
      assert.equal(res.status, 201, res.text);
      ids.push(res.body.id as string);
    }
    let inFlight = 0;
    let most = 0;
    const queries = {
      async run(_tenant: unknown, query: { stats: unknown }) {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 30));
        inFlight--;
        return query.stats ? { kind: 'stats', stats: [{ by: {}, values: { 'count()': 5 } }] } : { kind: 'events', events: [] };
      },
    };
    assert.equal(await scheduler(queries, 3).evaluateDue(), 7);
    assert.equal(most, 3, 'three evaluations ran at once');
    for (const id of ids) assert.deepEqual(await stored(id), { changes: ['firing'], groups: ['firing'], notifications: ['firing'] });
    assert.equal(await scheduler(queries, 3).evaluateDue(), 0, 'none due again before its next interval');
    for (const id of ids) await s.request('DELETE', `/monitors/${id}`);
  });
});
