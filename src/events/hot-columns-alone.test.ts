/**
 * Hot keys read from their columns alone (duckdb-soql-hot.ts): when no stored row of a
 * query's datasets needs the JSON for a key, DuckDB's SQL names the column and not `payload`
 * (so the payload text is not read at all). Checked on the SQL the query service hands the real
 * store (recorded on the way), and on the answers, which must equal a control dataset's without
 * hot keys: before (rows older than the keys), after retention removed those rows, after a value
 * of another type arrived, and when such a value is loaded while a query runs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { QueryService, runQuery, type QueryResult } from '../query/query-service.js';
import { readSoql } from '../engine/soql-read.js';
import type { EventStore } from '../engine/event-store.js';
import { legs } from '../test-support/ci.js';

const day = 86_400_000;

/** Game events: map, ping, ranked, match.round, all of one type each. */
const gameEvents = (from: number, count: number, ts?: number) =>
  Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return {
      ...(ts === undefined ? {} : { ts }),
      event: i % 4 ? 'match.end' : 'match.start',
      source: `srv-${i % 3}`,
      payload: { map: ['dust', 'nuke', 'inferno'][i % 3], ping: (i * 7) % 150, ranked: i % 3 === 0, match: { round: i % 6 } },
    };
  });

/** The queries compared, on the dataset given (each reads one key). */
const queries = (d: string) => ({
  map: [`dataset:${d} AND payload.map == dust`, `dataset:${d} group by payload.map`, `dataset:${d} AND payload.map:in* stats count() by payload.ranked`],
  ping: [`dataset:${d} AND payload.ping > 100`, `dataset:${d} stats p95(payload.ping) by source`, `dataset:${d} group by payload.ping`],
});

describe('hot keys read from their columns alone', () => {
  let s: TestServer;
  /** Every SQL text (filter, keys, values) the service handed the store, in order. */
  let sql: string[] = [];
  /** Runs once before the next statement reaches the store (a load landing while a query runs). */
  let beforeNextRead: (() => Promise<void>) | undefined;
  let service: QueryService;

  before(async () => {
    // Pins alone, and no background task during the test: what it checks is the rows loaded
    // before the keys were hot, which the task's backfill would give their columns (that is
    // hot-keys-auto.test.ts's).
    s = await startTestServer({ plan: 'enterprise', env: { OPS_HOT_KEYS_AUTO: 'false', OPS_HOT_KEYS_INTERVAL_MS: '86400000' } });
    const store = s.server.events.store;
    const recorded = (texts: string[]) => {
      sql.push(texts.join(' | '));
    };
    const hook = async () => {
      const run = beforeNextRead;
      beforeNextRead = undefined;
      if (run) await run();
    };
    // The real store (what the query service uses of it); its statements are noted on the way.
    const recording: Pick<EventStore, 'dialect' | 'hotLayouts' | 'query' | 'aggregate' | 'stats' | 'soql'> = {
      // The store's own SOQL read, over the SQL reads below.
      soql: (tenant, request) => readSoql(recording as EventStore, tenant, request),
      dialect: () => store.dialect(),
      hotLayouts: (tenant, ids) => store.hotLayouts(tenant, ids),
      query: async (tenant, request) => {
        recorded([request.filter.where]);
        await hook();
        return store.query(tenant, request);
      },
      aggregate: async (tenant, request) => {
        recorded([request.filter.where, request.key.sql]);
        await hook();
        return store.aggregate(tenant, request);
      },
      stats: async (tenant, request) => {
        recorded([request.filter.where, ...request.keys.map((k) => k.sql), ...request.values.map((v) => v.sql)]);
        await hook();
        return store.stats(tenant, request);
      },
    };
    service = new QueryService({ store: recording as EventStore, datasets: s.server.events.datasets, cursors: s.server.ctx.cursors, now: () => s.server.ctx.clock.now() });
  });
  after(() => s.close());

  const ingest = async (name: string, events: unknown[]) => {
    const r = await s.request('POST', `/datasets/${name}/ingest`, { json: events });
    assert.equal(r.status, 200, r.text);
  };
  const both = async (events: unknown[]) => {
    await ingest('solo', events);
    await ingest('solocontrol', events);
  };
  /** The answer without what differs between datasets (ids, names, times of ingest). */
  const plain = (r: QueryResult) => (r.kind === 'events' ? r.events.map((e) => [e.event, e.payloadJson]) : r.kind === 'groups' ? r.groups : r.stats);
  /**
   * The query's answer equals the one on the dataset's control (`dataset:x` → `dataset:xcontrol`);
   * answers the SQL of the query's last statement (after any rerun) and all its statements.
   */
  const check = async (q: string) => {
    sql = [];
    const mine = plain(await runQuery(service, s.tenants.a, q));
    const statements = [...sql];
    const theirs = plain(await runQuery(service, s.tenants.a, q.replace(/dataset:(\w+)/, 'dataset:$1control')));
    assert.deepEqual(mine, theirs, q);
    // Over HTTP too: what a user sees.
    const http = await s.request('POST', '/query', { json: { q } });
    assert.equal(http.status, 200, http.text);
    return { last: statements[statements.length - 1]!, statements };
  };
  const readsJson = async (q: string) => /payload/.test((await check(q)).last);

  test('rows from before the keys were hot need the JSON; once retention removed them, the columns alone; a value of another type brings the JSON back for its key only', async () => {
    const now = s.server.ctx.clock.now();
    await both(gameEvents(0, 30, now - 10 * day));
    const pinned = await s.request('PATCH', '/datasets/solo', {
      json: { hot_keys: [{ key: 'map', type: 'string' }, { key: 'ping', type: 'number' }, { key: 'ranked', type: 'boolean' }] },
    });
    assert.equal(pinned.status, 200, pinned.text);
    await both(gameEvents(30, 60));
    const dialect = await s.server.events.store.dialect();
    const all = [...queries('solo').map, ...queries('solo').ping];
    for (const q of all) {
      const json = await readsJson(q);
      if (dialect === 'duckdb') assert.ok(json, `${q}: the older rows read the JSON`);
    }

    // Retention removes the rows older than the keys: every row of solo now has the columns.
    for (const d of ['solo', 'solocontrol']) assert.equal((await s.request('PATCH', `/datasets/${d}`, { json: { retention_days: 5 } })).status, 200);
    await s.server.events.purge();
    for (const q of all) {
      const json = await readsJson(q);
      if (dialect === 'duckdb') assert.ok(!json, `${q}: read from the columns alone`);
    }
    // The rest checks DuckDB's SQL (ClickHouse reads the columns by ts ranges).
    if (dialect !== 'duckdb') return;

    // A ping of another type: ping's reads take the JSON again, map's keep the columns alone.
    await both([{ event: 'match.end', source: 'srv-1', payload: { map: 'dust', ping: 'slow', ranked: false, match: { round: 1 } } }]);
    for (const q of queries('solo').ping) assert.ok(await readsJson(q), `${q}: ping reads the JSON again`);
    for (const q of queries('solo').map) assert.ok(!(await readsJson(q)), `${q}: map still from its column alone`);

    // A ping that is not an integer: the group key of ping reads the JSON (1.5 is written from
    // the JSON text), the filters and p95 read the number column as before.
    await both([{ event: 'match.end', source: 'srv-2', payload: { map: 'nuke', ping: 1.5, ranked: true, match: { round: 2 } } }]);
    assert.ok(await readsJson(`dataset:solo group by payload.ping`));
  });

  // What it checks is how DuckDB's statements read the columns and the JSON.
  legs.duckdb().test('a value of another type loaded while a query runs: the query runs again with the JSON, and answers as the control', async () => {
    for (const d of ['race', 'racecontrol']) assert.equal((await s.request('POST', '/datasets', { json: { name: d } })).status, 201);
    assert.equal((await s.request('PATCH', '/datasets/race', { json: { hot_keys: [{ key: 'map', type: 'string' }] } })).status, 200);
    for (const d of ['race', 'racecontrol']) await ingest(d, gameEvents(0, 30));
    // A read waits for the loader: then race's counts hold its rows (the compile reads the counts
    // without waiting, and the loader loads at most every OPS_EVENTS_LOAD_INTERVAL_MS unless a
    // read waits; before its rows are loaded a dataset's keys read the JSON, which is exact).
    await s.request('POST', '/query', { json: { q: 'dataset:race stats count()' } });
    const q = 'dataset:race group by payload.map';
    assert.ok(!(await readsJson(q)), 'every row has map in its column');
    // Loaded before the statement, after the service compiled it from the counts without it.
    const odd = [{ event: 'x', payload: { map: 42 } }, { event: 'x', payload: { map: ['dust'] } }];
    beforeNextRead = async () => {
      for (const d of ['race', 'racecontrol']) await ingest(d, odd);
      // Wait for the load (a read waits for the loader).
      await s.request('POST', '/query', { json: { q: 'dataset:race stats count()' } });
    };
    sql = [];
    const mine = plain(await runQuery(service, s.tenants.a, q));
    assert.equal(sql.length, 2, `compiled without the JSON, then again with it: ${sql.join('\n')}`);
    assert.ok(!/payload/.test(sql[0]!), sql[0]);
    assert.ok(/payload/.test(sql[1]!), sql[1]);
    assert.deepEqual(mine, plain(await runQuery(service, s.tenants.a, 'dataset:racecontrol group by payload.map')));
    const groups = mine as Array<{ value: unknown; count: number }>;
    assert.deepEqual(
      groups.filter((g) => typeof g.value !== 'string').map((g) => g.value),
      [42, ['dust']].filter((v) => groups.some((g) => JSON.stringify(g.value) === JSON.stringify(v))),
    );
    assert.equal(groups.find((g) => g.value === 42)?.count, 1, 'the number read from the JSON');
    assert.equal(groups.find((g) => g.value === null), undefined, 'no row read as missing');
  });
});
