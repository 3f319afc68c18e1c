/**
 * `group by` a hot key on ClickHouse (clickhouse-soql-hot.ts hotGroupOf): the rows are
 * grouped first by the slot columns the key's types leave varying — the text alone when every
 * row holds a string, as `group by source` groups its column — and the key's JSON text is
 * written once per group. The types come from hotLayouts (each load adds its rows' before its
 * INSERT, with a new version when one is new); a query that compiled with fewer types than the
 * rows it read runs again. Checked on the form the query service hands the real store
 * (recorded on the way) and on the answers, which must equal a control dataset's without hot
 * keys, over HTTP-loaded events. ClickHouse leg only (OPS_TEST_CLICKHOUSE_URL).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { QueryService, runQuery, type QueryResult } from '../query/query-service.js';
import { readSoql } from '../engine/soql-read.js';
import type { EventStore } from '../engine/event-store.js';
import { legs } from '../test-support/ci.js';

const onLeg = legs.clickhouse();

const gameEvents = (from: number, count: number) =>
  Array.from({ length: count }, (_, k) => {
    const i = from + k;
    // A map with a quote in it: its JSON text is not the string in quotes (hot_j holds it).
    return { event: 'match.end', source: `srv-${i % 3}`, payload: { map: ['dust', 'nuke', 'in"ferno'][i % 3], ping: (i * 7) % 150 } };
  });

onLeg.describe('group by a hot key on ClickHouse: by the columns its types leave varying', () => {
  let s: TestServer;
  /** Per statement the service handed the store for a `group by`: the two-step keys, or the one-step key's SQL. */
  let forms: string[] = [];
  /** Runs once before the next statement reaches the store (a load landing while a query runs). */
  let beforeNextRead: (() => Promise<void>) | undefined;
  let service: QueryService;

  before(async () => {
    // Pins alone: the control dataset gets no keys of its own.
    s = await startTestServer({ plan: 'enterprise', env: { OPS_HOT_KEYS_AUTO: 'false' } });
    const store = s.server.events.store;
    const recording: Pick<EventStore, 'dialect' | 'hotLayouts' | 'aggregate' | 'soql'> = {
      // The store's own SOQL read, over the SQL reads below.
      soql: (tenant, request) => readSoql(recording as EventStore, tenant, request),
      dialect: () => store.dialect(),
      hotLayouts: (tenant, ids) => store.hotLayouts(tenant, ids),
      aggregate: async (tenant, request) => {
        forms.push(request.key.twoStep ? request.key.twoStep.keys.join(',') : request.key.sql);
        const run = beforeNextRead;
        beforeNextRead = undefined;
        if (run) await run();
        return store.aggregate(tenant, request);
      },
    };
    service = new QueryService({ store: recording as EventStore, datasets: s.server.events.datasets, cursors: s.server.ctx.cursors, now: () => s.server.ctx.clock.now() });
    for (const d of ['race', 'racecontrol']) assert.equal((await s.request('POST', '/datasets', { json: { name: d } })).status, 201);
    // Pinned before the first event: every row has the columns.
    const pinned = await s.request('PATCH', '/datasets/race', { json: { hot_keys: [{ key: 'map', type: 'string' }, { key: 'ping', type: 'number' }] } });
    assert.equal(pinned.status, 200, pinned.text);
  });
  after(() => s?.close());

  const ingest = async (events: unknown[]) => {
    for (const d of ['race', 'racecontrol']) {
      const r = await s.request('POST', `/datasets/${d}/ingest`, { json: events });
      assert.equal(r.status, 200, r.text);
    }
  };
  const groups = (r: QueryResult) => (r.kind === 'groups' ? r.groups : assert.fail(`not groups: ${r.kind}`));
  /** The answer, which must equal the control's (and HTTP's); and the forms of the statements it took. */
  const check = async (q: string) => {
    forms = [];
    const mine = groups(await runQuery(service, s.tenants.a, q));
    const statements = [...forms];
    assert.deepEqual(mine, groups(await runQuery(service, s.tenants.a, q.replace('dataset:race', 'dataset:racecontrol'))), q);
    const http = await s.request('POST', '/query', { json: { q } });
    assert.equal(http.status, 200, http.text);
    assert.deepEqual(http.body.groups, mine);
    return { groups: mine, forms: statements };
  };

  test('strings only: grouped by the text alone; numbers only: by the number alone', async () => {
    await ingest(gameEvents(0, 30));
    const map = await check('dataset:race group by payload.map');
    assert.deepEqual(map.forms, ['key_s']);
    assert.deepEqual(
      map.groups.map((g) => g.value),
      ['dust', 'in"ferno', 'nuke'],
    );
    assert.deepEqual((await check('dataset:race group by payload.ping')).forms, ['key_n']);
  });

  test('values of other types loaded while a query runs: it runs again with their columns, and answers as the control', async () => {
    const q = 'dataset:race group by payload.map';
    beforeNextRead = async () => {
      // A number, an array and a missing map, loaded after the compile, before the statement.
      await ingest([{ event: 'x', payload: { map: 42 } }, { event: 'x', payload: { map: ['dust'] } }, { event: 'x', payload: {} }]);
      // A read waits for the loader.
      await s.request('POST', '/query', { json: { q: 'dataset:race stats count()' } });
    };
    const { groups: answer, forms: statements } = await check(q);
    assert.deepEqual(statements, ['key_s', 'key_t,key_s,key_n,key_j'], 'compiled with strings only, then again with every type the rows hold');
    assert.equal(answer.find((g) => g.value === 42)?.count, 1);
    assert.equal(answer.find((g) => Array.isArray(g.value))?.count, 1);
    assert.equal(answer.find((g) => g.value === null)?.count, 1, 'the missing map');
    // And from now on compiled with them at once.
    assert.deepEqual((await check(q)).forms, ['key_t,key_s,key_n,key_j']);
  });
});
