/**
 * Hot keys in the background (src/events/hot-key-chooser.ts): with the default
 * settings a dataset's keys are chosen without anyone asking for its schema, the rows stored
 * before are given their columns (the backfill), and queries then read the columns alone — while
 * every answer stays the one a server without hot keys gives for the same events. The task's
 * interval is shrunk (OPS_HOT_KEYS_INTERVAL_MS) so that it ticks during the test; the control
 * server has OPS_HOT_KEYS_AUTO=false.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { QueryService, runQuery, type QueryResult } from '../query/query-service.js';
import { readSoql } from '../engine/soql-read.js';
import type { EventStore } from '../engine/event-store.js';
import type { HotLayout } from '../engine/hot-columns.js';
import type { Tenant } from '../tenancy/tenant.js';
import { HotKeyChooser } from './hot-key-chooser.js';
import { printSoql, type Expr } from '../soql/index.js';
import { narrow, queryArb } from '../soql/testkit.test.js';
import { createLogger } from '../kernel/logger.js';

const tick = '200';

/** Waits (polling) until `check` answers something; fails with `what` if it never does. */
async function until<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Events of one type per key: map, ping, ranked, match.round. */
const clean = (from: number, count: number) =>
  Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return { event: i % 4 ? 'match.end' : 'match.start', source: `srv-${i % 3}`, payload: { map: ['dust', 'nuke', 'inferno'][i % 3], ping: (i * 7) % 150, ranked: i % 3 === 0, match: { round: i % 6 } } };
  });

/**
 * Game events whose keys are mostly of one type, with the odd values discovery and the columns
 * must get right: another type, null, nested, arrays, keys missing, text that compares oddly.
 */
const oddValue = fc.oneof(
  fc.constantFrom(null, 'slow', '', 'Dust 2', 'nuke', 1.5, -0, 1e21, 2 ** 60, true, false, 0, 150),
  fc.array(fc.constantFrom(1, 'a', null), { maxLength: 2 }),
  fc.record({ a: fc.constantFrom('x', 1, null) }),
);
/**
 * Each event's ts is its own, 20.3 hours back (within discovery's 24 hours) and 500 ms apart,
 * the same on both servers, which ingest at slightly different moments: no relative time the
 * queries can name (up to 300 seconds or minutes, whole hours, days, weeks) falls among them
 * while the test runs (less than 35 minutes).
 */
const tsOf = (i: number, now: number) => new Date(now - 73_080_000 + i * 500).toISOString();
const gameEvent = fc.record(
  {
    event: fc.constantFrom('match.start', 'match.end', 'kill'),
    source: fc.constantFrom('srv-0', 'srv-1', 'eu-west'),
    payload: fc.record(
      {
        ping: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 200 }), weight: 9 }, { arbitrary: oddValue, weight: 1 }),
        s: fc.oneof({ arbitrary: fc.constantFrom('eu', 'EU', 'west', 'a', 'x y', '150'), weight: 9 }, { arbitrary: oddValue, weight: 1 }),
        a: fc.oneof({ arbitrary: fc.boolean(), weight: 9 }, { arbitrary: oddValue, weight: 1 }),
        n: fc.oneof({ arbitrary: fc.double({ min: -1000, max: 1000, noNaN: true }), weight: 9 }, { arbitrary: oddValue, weight: 1 }),
        b: fc.record({ a: fc.oneof({ arbitrary: fc.constantFrom('eu', 'west', '20'), weight: 9 }, { arbitrary: oddValue, weight: 1 }) }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['event', 'payload'] },
);

/** Whether every stored row of the dataset carries its current layout (the backfill is done): the layouts with rows. */
function filled(layouts: readonly HotLayout[]): boolean {
  const withRows = layouts.filter((l) => l.rows !== undefined || l.stored !== undefined);
  const current = layouts.find((l) => l.current) ?? [...layouts].filter((l) => l.slots.length).sort((a, b) => b.id - a.id)[0];
  return !!current && current.slots.length > 0 && withRows.length > 0 && withRows.every((l) => l.id === current.id);
}

/** The answer without what differs between servers (ids, times of ingest). */
const plain = (r: QueryResult) => (r.kind === 'events' ? r.events.map((e) => [e.event, e.source, e.payloadJson]) : r.kind === 'groups' ? r.groups : r.stats);

describe('hot keys chosen and filled in the background (the default)', () => {
  let auto: TestServer;
  let control: TestServer;
  /** Every SQL text (filter, keys, values) the recording service handed the auto server's store. */
  let sql: string[] = [];
  let recorded: QueryService;

  before(async () => {
    [auto, control] = await Promise.all([
      startTestServer({ plan: 'enterprise', env: { OPS_HOT_KEYS_INTERVAL_MS: tick } }),
      startTestServer({ plan: 'enterprise', env: { OPS_HOT_KEYS_AUTO: 'false', OPS_HOT_KEYS_INTERVAL_MS: tick } }),
    ]);
    const store = auto.server.events.store;
    const recording: Pick<EventStore, 'dialect' | 'hotLayouts' | 'query' | 'aggregate' | 'stats' | 'soql'> = {
      // The store's own SOQL read, over the SQL reads below.
      soql: (tenant, request) => readSoql(recording as EventStore, tenant, request),
      dialect: () => store.dialect(),
      hotLayouts: (tenant, ids) => store.hotLayouts(tenant, ids),
      query: (tenant, request) => (sql.push(request.filter.where), store.query(tenant, request)),
      aggregate: (tenant, request) => (sql.push([request.filter.where, request.key.sql, ...(request.key.twoStep?.columns ?? [])].join(' | ')), store.aggregate(tenant, request)),
      stats: (tenant, request) => (sql.push([request.filter.where, ...request.keys.map((k) => k.sql), ...request.values.map((v) => v.sql)].join(' | ')), store.stats(tenant, request)),
    };
    recorded = new QueryService({ store: recording as EventStore, datasets: auto.server.events.datasets, cursors: auto.server.ctx.cursors, now: () => auto.server.ctx.clock.now() });
  });
  after(async () => {
    await Promise.all([auto?.close(), control?.close()]);
  });

  const ingest = async (s: TestServer, name: string, events: unknown[], token?: string) => {
    const r = await s.request('POST', `/datasets/${name}/ingest`, { json: events, ...(token ? { token } : {}) });
    assert.equal(r.status, 200, r.text);
  };
  const both = async (name: string, events: unknown[]) => {
    await Promise.all([ingest(auto, name, events), ingest(control, name, events)]);
  };
  const hotKeysOf = async (s: TestServer, name: string, token?: string) => {
    const r = await s.request('GET', '/datasets', token ? { token } : {});
    assert.equal(r.status, 200, r.text);
    return (r.body.datasets as Array<{ name: string; hot_keys?: Array<{ key: string; type: string; pinned: boolean }> }>).find((d) => d.name === name)?.hot_keys;
  };
  const layoutsOf = async (s: TestServer, name: string, tenant: Tenant = s.tenants.a) => {
    const id = (await s.server.events.datasets.find(tenant, name))!.id;
    return s.server.events.store.hotLayouts(tenant, [id]);
  };
  /** The answer over HTTP (what a user sees) on both servers: equal. */
  const same = async (q: string) => {
    const [mine, theirs] = await Promise.all([auto.request('POST', '/query', { json: { q } }), control.request('POST', '/query', { json: { q } })]);
    assert.equal(mine.status, theirs.status, `${q}: ${mine.text} / ${theirs.text}`);
    // A sum or mean of doubles depends on the order the rows are added in (ClickHouse's parts and
    // shards differ between the two servers' databases): compared to 12 significant digits.
    const rounded = (stats: Array<{ by: unknown; values: Record<string, number | null> }>) =>
      stats.map((r) => ({ by: r.by, values: Object.fromEntries(Object.entries(r.values).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toPrecision(12)) : v])) }));
    const strip = (b: { events?: Array<{ event: string; source: string; payload: unknown }>; groups?: unknown; stats?: Array<{ by: unknown; values: Record<string, number | null> }>; error?: { code: string } }) =>
      b.events ? b.events.map((e) => [e.event, e.source, e.payload]) : (b.groups ?? (b.stats && rounded(b.stats)) ?? b.error?.code);
    assert.deepEqual(strip(mine.body), strip(theirs.body), q);
  };
  /** Whether the SQL of the query's last statement on the auto server reads the payload (its JSON, or ClickHouse's arrays). */
  const readsPayload = async (q: string) => {
    sql = [];
    plain(await runQuery(recorded, auto.tenants.a, q));
    return /payload/.test(sql[sql.length - 1]!);
  };

  test('keys are chosen with no schema request, the older rows are filled, and queries read the columns alone', async () => {
    await both('clean', clean(0, 300));
    const keys = await until('the background task chose clean’s keys', () => hotKeysOf(auto, 'clean'));
    assert.deepEqual(
      keys.map((k) => `${k.key}:${k.type}${k.pinned ? '*' : ''}`).sort(),
      ['map:string', 'match.round:number', 'ping:number', 'ranked:boolean'],
    );
    // Rows loaded with the keys, beside the filling of the older ones.
    await both('clean', clean(300, 100));
    await until('the rows stored before the keys were filled', async () => filled(await layoutsOf(auto, 'clean')));
    const queries = [
      'dataset:clean AND payload.map == dust',
      'dataset:clean AND payload.ping > 100 AND payload.ranked == true',
      'dataset:clean group by payload.map',
      'dataset:clean group by payload.match.round',
      'dataset:clean stats p95(payload.ping), count() by source',
      'dataset:clean AND NOT payload.map:in* stats count() by payload.ranked',
    ];
    for (const q of queries) {
      assert.ok(!(await readsPayload(q)), `${q}: from the columns alone: ${sql[sql.length - 1]}`);
      await same(q);
    }
    // The schema shows them; the control server made nothing hot.
    const schema = await auto.request('GET', '/datasets/clean/schema');
    assert.equal(schema.status, 200, schema.text);
    assert.equal(schema.body.hot_keys.length, 4);
    assert.equal(await hotKeysOf(control, 'clean'), undefined);
  });

  test('random events and queries answer as without hot keys, before, during and after the filling', async () => {
    const now = auto.server.ctx.clock.now();
    const first = fc.sample(gameEvent, { numRuns: 400, seed: 31 }).map((e, i) => ({ ...e, ts: tsOf(i, now) }));
    const later = fc.sample(gameEvent, { numRuns: 200, seed: 32 }).map((e, i) => ({ ...e, ts: tsOf(400 + i, now) }));
    const game: Expr = { type: 'compare', field: { kind: 'canonical', name: 'dataset' }, op: ':', value: { type: 'text', text: 'game', quoted: false }, position: 0 };
    // Over game's events (the queries' own dataset conditions ANDed in); not by event_id or
    // ingested_at, which the two servers give each event differently.
    const queries = fc
      .sample(queryArb(narrow, 2), { numRuns: 120, seed: 33 })
      .map((q) => printSoql({ ...q, filter: q.filter ? { type: 'and', items: [game, q.filter], position: 0 } : game }))
      .filter((q) => !/event_id|ingested_at/.test(q))
      .slice(0, 80);
    const stats = [
      'stats count(), p95(payload.ping), avg(payload.n), max(payload.b.a) by source',
      'stats count(), sum(payload.n), min(payload.ping) by payload.a',
      'stats count_distinct(payload.s), p50(payload.n) by payload.s, payload.a',
      'stats count() by payload.ping',
    ].map((q) => `dataset:game ${q}`);
    const check = (q: string) => same(q);
    await both('game', first);
    for (const q of [...queries.slice(0, 20), ...stats]) await check(q);
    await until('the background task chose game’s keys', () => hotKeysOf(auto, 'game'));
    await both('game', later);
    // Some while the older rows are being filled (how many land before it ends depends on the machine).
    for (const q of queries.slice(20, 40)) await check(q);
    await until('game’s older rows were filled', async () => filled(await layoutsOf(auto, 'game')));
    for (const q of [...queries, ...stats]) await check(q);
  });

  test('another tenant’s dataset of the same name gets the keys of its own events', async () => {
    const other = auto.tenants.b;
    await ingest(auto, 'clean', Array.from({ length: 50 }, (_, i) => ({ event: 'x', payload: { level: i % 5, zone: ['a', 'b'][i % 2] } })), other.token);
    const keys = await until('tenant b’s clean has keys', () => hotKeysOf(auto, 'clean', other.token));
    assert.deepEqual(keys.map((k) => k.key).sort(), ['level', 'zone']);
    assert.deepEqual((await hotKeysOf(auto, 'clean'))!.map((k) => k.key).sort(), ['map', 'match.round', 'ping', 'ranked']);
    const r = await auto.request('POST', '/query', { json: { q: 'dataset:clean AND payload.zone == a stats count()' }, token: other.token });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.stats[0].values['count()'], 25);
  });

  test('OPS_HOT_KEYS_AUTO=false: nothing is chosen, and a pin’s older rows are filled in the background', async () => {
    await ingest(control, 'pinned', clean(0, 200));
    // The task looks at the new dataset (its events) before the pin: the pin alone, with no
    // events after it, brings it back to fill the rows.
    await new Promise((resolve) => setTimeout(resolve, 5 * Number(tick)));
    const pinned = await control.request('PATCH', '/datasets/pinned', { json: { hot_keys: ['map'] } });
    assert.equal(pinned.status, 200, pinned.text);
    await until('pinned’s older rows were filled', async () => filled(await layoutsOf(control, 'pinned')));
    // The task ticked over clean meanwhile (it loaded its events before), and chose nothing.
    assert.equal(await hotKeysOf(control, 'clean'), undefined);
    assert.deepEqual(await hotKeysOf(control, 'pinned'), [{ key: 'map', type: 'string', pinned: true }]);
    const r = await control.request('POST', '/query', { json: { q: 'dataset:pinned AND payload.map == nuke stats count()' } });
    assert.equal(r.body.stats[0].values['count()'], 67);
  });

  test('one turn per dataset: of two tasks over the same metadata store, one chooses and the other hands the stored keys to its store', async () => {
    // A server of its own whose task never ticks during the test: the two below are the only ones.
    const quiet = await startTestServer({ plan: 'enterprise', env: { OPS_HOT_KEYS_INTERVAL_MS: '86400000' } });
    after(() => quiet.close());
    const { server } = quiet;
    const events = server.events;
    await ingest(quiet, 'shared', clean(0, 1_200));
    const id = (await events.datasets.find(quiet.tenants.a, 'shared'))!.id;
    const choices: string[] = [];
    const task = (name: string) => {
      // The same datasets fed to both, as two ingesters of one dataset would each see them.
      const store: EventStore = Object.assign(Object.create(events.store) as EventStore, { takeActiveDatasets: () => [{ tenant: quiet.tenants.a, datasetId: id, keysChanged: false }] });
      const hotKeys = Object.assign(Object.create(events.hotKeys) as typeof events.hotKeys, {
        chooseInBackground: (...args: Parameters<typeof events.hotKeys.chooseInBackground>) => (choices.push(name), events.hotKeys.chooseInBackground(...args)),
      });
      // An interval far longer than the test: the turn taken is held throughout.
      return new HotKeyChooser({ db: server.ctx.metadata.db, store, hotKeys, schemas: events.schemas, clock: server.ctx.clock, intervalMs: 86_400_000, log: createLogger(false) });
    };
    const [a, b] = [task('a'), task('b')];
    await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
    assert.equal(choices.length, 1, `chosen once: ${choices.join(', ')}`);
    const turn = await server.ctx.metadata.db.selectFrom('dataset_hot_key_turns').selectAll().where('dataset_id', '=', id).executeTakeFirstOrThrow();
    assert.ok(turn.chosen_at);
    assert.ok((await hotKeysOf(quiet, 'shared'))?.length);
  });
});
