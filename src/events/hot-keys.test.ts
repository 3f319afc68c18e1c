import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

/** Game events: map, ping, region, round (nested), ranked; `rare` in one event of 40. */
const gameEvents = (from: number, count: number, pingAsText = false) =>
  Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return {
      event: i % 4 ? 'match.end' : 'match.start',
      source: `srv-${i % 3}`,
      payload: {
        map: ['dust', 'nuke', 'inferno', 'Dust 2'][i % 4],
        ping: pingAsText && i % 2 ? `p${i}` : (i * 7) % 150,
        region: i % 5 === 0 ? null : `eu-${i % 2}`,
        ranked: i % 3 === 0,
        match: { round: i % 6 },
        ...(i % 40 === 0 ? { rare: i } : {}),
      },
    };
  });

/** What the queries answer, on the dataset given and on the control dataset: equal, event for event. */
const queries = (d: string) => [
  `dataset:${d} AND payload.map == dust`,
  `dataset:${d} AND payload.map:du*`,
  `dataset:${d} AND payload.ping > 100`,
  `dataset:${d} AND payload.ping:p1*`,
  `dataset:${d} AND NOT payload.region exists`,
  `dataset:${d} AND payload.ranked == true`,
  `dataset:${d} AND payload.match.round >= 4`,
  `dataset:${d} group by payload.map`,
  `dataset:${d} group by payload.ping`,
  `dataset:${d} group by payload.ranked`,
  `dataset:${d} stats count(), p95(payload.ping), avg(payload.match.round), count_distinct(payload.map) by source`,
  `dataset:${d} stats max(payload.ping) by payload.map, payload.ranked`,
];

describe('hot payload keys', () => {
  let s: TestServer;
  before(async () => {
    // Keys chosen on schema requests here; the background task (hot-keys-auto.test.ts) never
    // ticks during the test, so the rows loaded before a key was hot keep reading the JSON.
    s = await startTestServer({ plan: 'enterprise', env: { OPS_HOT_KEYS_AUTO: 'true', OPS_HOT_KEYS_INTERVAL_MS: '86400000' } });
  });
  after(() => s.close());

  const ingest = async (name: string, events: unknown[], token?: string) => {
    const r = await s.request('POST', `/datasets/${name}/ingest`, { json: events, ...(token ? { token } : {}) });
    assert.equal(r.status, 200, r.text);
  };
  /** The answer without what differs between datasets (ids, names, times of ingest). */
  const answer = async (q: string) => {
    const r = await s.request('POST', '/query', { json: { q } });
    assert.equal(r.status, 200, `${q}: ${r.text}`);
    const b = r.body as { events?: Array<{ payload: unknown; event: string }>; groups?: unknown; stats?: unknown };
    return b.events ? b.events.map((e) => [e.event, e.payload]) : (b.groups ?? b.stats);
  };
  const assertSameAsControl = async (d: string) => {
    const [mine, control] = [queries(d), queries('control')];
    for (let i = 0; i < mine.length; i++) assert.deepEqual(await answer(mine[i]!), await answer(control[i]!), mine[i]);
  };

  test('a key becomes hot mid-way: events before and after are found, answers equal a dataset without hot keys', async () => {
    await ingest('game', gameEvents(0, 40));
    await ingest('control', gameEvents(0, 40));
    const before = await Promise.all(queries('game').map(answer));

    const schema = await s.request('GET', '/datasets/game/schema');
    assert.equal(schema.status, 200, schema.text);
    const hot = schema.body.hot_keys as Array<{ key: string; type: string; pinned: boolean }>;
    assert.deepEqual(
      hot.map((k) => `${k.key}:${k.type}`).sort(),
      ['map:string', 'match.round:number', 'ping:number', 'ranked:boolean', 'region:string'],
      'the keys held in ≥ 10% of the sample, with their type; rare is not one',
    );
    assert.ok(hot.every((k) => !k.pinned));
    const fields = schema.body.payload_fields as Array<{ key: string; hot?: true }>;
    assert.deepEqual(fields.filter((f) => f.hot).map((f) => f.key).sort(), ['map', 'match.round', 'ping', 'ranked', 'region']);
    assert.equal(fields.find((f) => f.key === 'rare')?.hot, undefined);
    const datasets = await s.request('GET', '/datasets');
    assert.equal(datasets.body.datasets.find((d: { name: string }) => d.name === 'game').hot_keys.length, 5);

    // The same events, now that the keys are hot (their rows were loaded before: the JSON).
    assert.deepEqual(await Promise.all(queries('game').map(answer)), before);
    // After: ping a string in half the new events (another type than its column's).
    await ingest('game', gameEvents(40, 40, true));
    await ingest('control', gameEvents(40, 40, true));
    const game = (await s.request('GET', '/datasets')).body.datasets.find((d: { name: string }) => d.name === 'game');
    assert.ok(game);
    const layouts = await s.server.events.store.hotLayouts(s.tenants.a, [(await s.server.events.datasets.find(s.tenants.a, 'game'))!.id]);
    // One layout with typed columns on both engines. ClickHouse also says which layouts the
    // dataset's rows carry: layout 0 (no hot keys) for the first 40, so its reads over all of
    // them keep to the flattened payload.
    assert.equal(layouts.filter((l) => l.slots.length).length, 1);
    if (process.env.OPS_TEST_CLICKHOUSE_URL) assert.deepEqual(layouts.map((l) => l.id).sort(), [0, layouts.find((l) => l.slots.length)!.id]);
    await assertSameAsControl('game');
    // Retention and discovery see the same events as before.
    const again = await s.request('GET', '/datasets/game/schema');
    assert.equal(again.status, 200);
  });

  test('keys hot before the first event: every row has the columns, so queries read them; answers equal a dataset without', async () => {
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'early' } })).status, 201);
    const pinned = await s.request('PATCH', '/datasets/early', {
      json: { hot_keys: [{ key: 'map', type: 'string' }, { key: 'ping', type: 'number' }, { key: 'ranked', type: 'boolean' }, { key: 'match.round', type: 'number' }, { key: 'region', type: 'string' }] },
    });
    assert.equal(pinned.status, 200, pinned.text);
    // ping changes type half-way: the columns hold it either way (ClickHouse) or send it to the JSON (DuckDB).
    await ingest('early', [...gameEvents(0, 40), ...gameEvents(40, 40, true)]);
    const control = await s.request('POST', '/datasets', { json: { name: 'earlycontrol' } });
    assert.equal(control.status, 201);
    await ingest('earlycontrol', [...gameEvents(0, 40), ...gameEvents(40, 40, true)]);
    const [mine, theirs] = [queries('early'), queries('earlycontrol')];
    for (let i = 0; i < mine.length; i++) assert.deepEqual(await answer(mine[i]!), await answer(theirs[i]!), mine[i]);
    // Narrowed in time and to the dataset, and across datasets (some without the keys: the JSON).
    for (const q of ['payload.map == dust group by payload.ranked', 'ts >= now-1h AND payload.ping >= 100 stats count() by payload.map']) {
      assert.deepEqual(await answer(`dataset:early AND ${q}`), await answer(`dataset:earlycontrol AND ${q}`), q);
    }
    // Over both datasets (one without the keys): the JSON, and the early dataset's share is as above.
    const both = (await answer('(dataset:early OR dataset:earlycontrol) AND payload.map == nuke group by dataset')) as Array<{ value: string; count: number }>;
    assert.deepEqual(both.map((g) => g.count), [20, 20]);
    const id = (await s.server.events.datasets.find(s.tenants.a, 'early'))!.id;
    const layouts = await s.server.events.store.hotLayouts(s.tenants.a, [id]);
    assert.equal(layouts.filter((l) => l.slots.length).length, 1);
    if (process.env.OPS_TEST_CLICKHOUSE_URL) assert.ok(layouts.every((l) => l.slots.length), 'every row of the dataset has the layout');
  });

  test('a key queries use is hot though discovery alone would not choose it (rare in the sample)', async () => {
    await ingest('used', gameEvents(0, 80));
    // `rare` is in 2 of the 80 events (below the 10% discovery asks), `ranked` in all: both named by queries.
    for (let i = 0; i < 3; i++) {
      const r = await s.request('POST', '/query', { json: { q: 'dataset:used AND payload.rare >= 0 stats count() by payload.map' } });
      assert.equal(r.status, 200, r.text);
    }
    // Named twice only: not enough (minUses is 3).
    for (let i = 0; i < 2; i++) assert.equal((await s.request('POST', '/query', { json: { q: 'dataset:used AND payload.nothere == 1' } })).status, 200);
    const schema = await s.request('GET', '/datasets/used/schema');
    assert.equal(schema.status, 200, schema.text);
    const hot = (schema.body.hot_keys as Array<{ key: string; type: string; pinned: boolean }>).map((k) => `${k.key}:${k.type}`);
    assert.deepEqual(hot.slice(0, 2).sort(), ['map:string', 'rare:number'], 'the keys queries named first');
    assert.deepEqual(hot.slice(2).sort(), ['match.round:number', 'ping:number', 'ranked:boolean', 'region:string']);
    // And it is read right from its column.
    assert.equal((await s.request('POST', '/query', { json: { q: 'dataset:used AND payload.rare >= 0' } })).body.events.length, 2);
  });

  test('discovery leaves identifier-like strings out (their columns barely compress); a pin or queries naming one make it hot', async () => {
    // player_id and steam_id: a distinct string in every event; map, team: few values; score: a distinct number each.
    const players = (from: number, count: number) =>
      Array.from({ length: count }, (_, k) => {
        const i = from + k;
        return { event: 'kill', payload: { map: ['dust', 'nuke'][i % 2], team: `t${i % 2}`, player_id: `p_${String(i).padStart(8, '0')}`, steam_id: `7656119${i}`, score: i } };
      });
    await ingest('players', players(0, 60));
    const schema = await s.request('GET', '/datasets/players/schema');
    assert.equal(schema.status, 200, schema.text);
    const keys = () => (schema.body.hot_keys as Array<{ key: string }>).map((k) => k.key).sort();
    assert.deepEqual(keys(), ['map', 'score', 'team'], 'numbers compress whatever their values; identifier-like strings are left out');

    const pinned = await s.request('PATCH', '/datasets/players', { json: { hot_keys: ['player_id'] } });
    assert.equal(pinned.status, 200, pinned.text);
    assert.deepEqual(
      (pinned.body.hot_keys as Array<{ key: string; pinned: boolean }>).map((k) => `${k.key}${k.pinned ? '*' : ''}`),
      ['player_id*', 'map', 'score', 'team'],
    );
    await ingest('players', players(60, 20));
    const control = await s.request('POST', '/query', { json: { q: 'dataset:players AND payload.player_id == p_00000070' } });
    assert.equal(control.body.events.length, 1);

    // Named by 3 queries (before the sample is taken), steam_id is hot too: queries show its column pays.
    await ingest('players2', players(0, 60));
    for (let i = 0; i < 3; i++) {
      const r = await s.request('POST', '/query', { json: { q: 'dataset:players2 AND payload.steam_id == 765611950' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.events.length, 1);
    }
    const used = await s.request('GET', '/datasets/players2/schema');
    assert.equal(used.status, 200, used.text);
    assert.deepEqual((used.body.hot_keys as Array<{ key: string }>).map((k) => k.key).sort(), ['map', 'score', 'steam_id', 'team']);
  });

  test('pin and unpin: PATCH hot_keys replaces the pins; discovery fills the rest', async () => {
    await ingest('pins', gameEvents(0, 40));
    const pinned = await s.request('PATCH', '/datasets/pins', { json: { hot_keys: ['rare', { key: 'later', type: 'number' }] } });
    assert.equal(pinned.status, 200, pinned.text);
    assert.deepEqual(pinned.body.hot_keys.slice(0, 2), [
      { key: 'rare', type: 'number', pinned: true },
      { key: 'later', type: 'number', pinned: true },
    ]);
    await ingest('pins', [{ event: 'x', payload: { rare: 5, later: 7 } }]);
    const found = await s.request('POST', '/query', { json: { q: 'dataset:pins AND payload.later == 7 AND payload.rare < 10' } });
    assert.equal(found.body.events.length, 1);
    assert.equal((await s.request('POST', '/query', { json: { q: 'dataset:pins AND payload.rare exists' } })).body.events.length, 2);

    const schema = await s.request('GET', '/datasets/pins/schema');
    assert.deepEqual(
      (schema.body.hot_keys as Array<{ key: string; pinned: boolean }>).map((k) => `${k.key}${k.pinned ? '*' : ''}`),
      ['rare*', 'later*', 'map', 'match.round', 'ping', 'ranked', 'region'],
    );
    const unpinned = await s.request('PATCH', '/datasets/pins', { json: { hot_keys: [] } });
    assert.equal(unpinned.status, 200, unpinned.text);
    assert.deepEqual(
      (unpinned.body.hot_keys as Array<{ key: string; pinned: boolean }>).map((k) => k.key),
      ['map', 'match.round', 'ping', 'ranked', 'region'],
    );
    assert.equal((await s.request('POST', '/query', { json: { q: 'dataset:pins AND payload.rare exists' } })).body.events.length, 2);
    // A patch without hot_keys leaves them.
    const renamed = await s.request('PATCH', '/datasets/pins', { json: { retention_days: 5 } });
    assert.equal(renamed.body.hot_keys.length, 5);
  });

  test('bad pins are 400 with the way out; logs:read cannot pin; another tenant’s dataset is 404', async () => {
    await ingest('badpins', [{ payload: { a: 1 } }]);
    const patch = (hot_keys: unknown, token?: string) => s.request('PATCH', '/datasets/badpins', { json: { hot_keys }, ...(token ? { token } : {}) });
    const unseen = await patch(['never_seen']);
    assert.equal(unseen.status, 400);
    assert.equal(unseen.body.error.code, 'bad_request');
    assert.match(unseen.body.error.message, /give its type, \{"key": "never_seen", "type": "number"\}/);
    const notAKey = await patch(['a b']);
    assert.equal(notAKey.status, 400);
    assert.match(notAKey.body.error.message, /not a payload key/);
    assert.equal((await patch(['a) OR (b'])).status, 400);
    assert.equal((await patch([{ key: 'a', type: 'date' }])).status, 400);
    assert.equal((await patch(Array.from({ length: 33 }, (_, i) => ({ key: `k${i}`, type: 'string' })))).status, 400);
    const reader = await s.token(s.tenants.a, ['logs:read']);
    assert.equal((await patch(['a'], reader)).status, 403);
    assert.equal((await s.request('PATCH', '/datasets/badpins', { json: { hot_keys: ['a'] }, token: s.tenants.b.token })).status, 404);
    assert.equal((await patch(['a'])).status, 200);
  });

  test('odd keys (dots, brackets, unicode, backquotes) can be hot and are read right', async () => {
    const odd = (i: number) => ({ 'a.b': i % 3, 'x[0]': `v${i % 2}`, ключ: i % 2 === 0, '😀': { 'c.d': `n${i % 4}` }, 'we`ird': i });
    await ingest('odd', Array.from({ length: 10 }, (_, i) => ({ payload: odd(i) })));
    await ingest('oddcontrol', Array.from({ length: 10 }, (_, i) => ({ payload: odd(i) })));
    const r = await s.request('PATCH', '/datasets/odd', {
      json: { hot_keys: ['`a.b`', '`x[0]`', { key: '`ключ`', type: 'boolean' }, { key: '`😀`.`c.d`', type: 'string' }, { key: '`we``ird`', type: 'number' }] },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.hot_keys.map((k: { key: string }) => k.key), ['`a.b`', '`x[0]`', '`ключ`', '`😀`.`c.d`', '`we``ird`']);
    await ingest('odd', Array.from({ length: 10 }, (_, i) => ({ payload: odd(i) })));
    await ingest('oddcontrol', Array.from({ length: 10 }, (_, i) => ({ payload: odd(i) })));
    for (const q of ['payload.`a.b` == 1', 'payload.`x[0]`:v*', 'payload.`ключ` == true', 'payload.`😀`.`c.d` == n3', 'payload.`we``ird` >= 5', 'group by payload.`😀`.`c.d`']) {
      assert.deepEqual(await answer(`dataset:odd AND ${q}`.replace('AND group', 'group')), await answer(`dataset:oddcontrol AND ${q}`.replace('AND group', 'group')), q);
    }
    const schema = await s.request('GET', '/datasets/odd/schema');
    assert.equal(schema.status, 200);
  });

  test('bad input: 5,000 keys in an event, 1,000-key events, 100 datasets × 32 hot keys: ingest keeps working, no 5xx, memory bounded', async () => {
    const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]));
    const refused = await s.request('POST', '/datasets/wide/ingest', { json: [{ payload: wide }, { payload: { ok: 1 } }] });
    assert.ok(refused.status < 500, refused.text);
    // 5 events of 1,000 distinct keys each: 5,000 distinct keys in the dataset.
    for (let e = 0; e < 5; e++) await ingest('wide', [{ payload: Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`k${e}_${i}`, i])) }]);
    const schema = await s.request('GET', '/datasets/wide/schema');
    assert.equal(schema.status, 200, schema.text);
    assert.ok(schema.body.hot_keys.length <= 32);

    const rss = process.memoryUsage().rss;
    const types = ['string', 'number', 'boolean'] as const;
    const value = (t: (typeof types)[number], i: number) => (t === 'string' ? `s${i}` : t === 'number' ? i : i % 2 === 0);
    for (let d = 0; d < 100; d++) {
      const keys = Array.from({ length: 32 }, (_, k) => ({ key: `k${k}`, type: types[(k + d) % 3]! }));
      await ingest(`many${d}`, [{ payload: { k0: 'x' } }]);
      const r = await s.request('PATCH', `/datasets/many${d}`, { json: { hot_keys: keys } });
      assert.equal(r.status, 200, r.text);
      const payload = Object.fromEntries(keys.map((k, i) => [k.key, value(k.type, i + d)]));
      await ingest(`many${d}`, Array.from({ length: 20 }, () => ({ payload })));
    }
    const q = await s.request('POST', '/query', { json: { q: 'payload.k1 exists stats count() by payload.k2' } });
    assert.equal(q.status, 200, q.text);
    const grown = (process.memoryUsage().rss - rss) / 1e6;
    assert.ok(grown < 400, `RSS grew ${grown.toFixed(0)} MB`);
    await ingest('many0', [{ payload: { k0: 1 } }]);
  });
});

describe('hot payload keys with OPS_HOT_KEYS_AUTO=false', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_HOT_KEYS_AUTO: 'false' } });
  });
  after(() => s.close());

  test('discovery makes nothing hot; pins are hot, and only they', async () => {
    const events = Array.from({ length: 20 }, (_, i) => ({ event: 'e', payload: { map: `m${i % 3}`, ping: i } }));
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'plain' } })).status, 201);
    assert.equal((await s.request('POST', '/datasets/plain/ingest', { json: events })).status, 200);
    const schema = await s.request('GET', '/datasets/plain/schema');
    assert.equal(schema.status, 200, schema.text);
    assert.deepEqual(schema.body.hot_keys ?? [], []);
    assert.ok((schema.body.payload_fields as Array<{ hot?: true }>).every((f) => f.hot === undefined));
    const pinned = await s.request('PATCH', '/datasets/plain', { json: { hot_keys: ['ping'] } });
    assert.equal(pinned.status, 200, pinned.text);
    assert.deepEqual(pinned.body.hot_keys, [{ key: 'ping', type: 'number', pinned: true }]);
    const again = await s.request('GET', '/datasets/plain/schema');
    assert.deepEqual((again.body.payload_fields as Array<{ key: string; hot?: true }>).filter((f) => f.hot).map((f) => f.key), ['ping']);
    const count = await s.request('POST', '/query', { json: { q: 'dataset:plain AND payload.ping >= 10 group by payload.map' } });
    assert.equal(count.status, 200, count.text);
    assert.equal((count.body.groups as Array<{ count: number }>).reduce((a, g) => a + g.count, 0), 10);
  });
});
