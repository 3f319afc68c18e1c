import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { compilePredicate, parseSoql } from '../soql/index.js';
import { matchAll } from '../engine/event-store.js';

const min = 60_000;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const nameOf = (eventId: string) => `e${Number(eventId.slice(-12))}`;

/**
 * The fixed data set of the SOQL.md examples: [name, dataset, minutes ago, fields].
 * e11 is in a dataset archived before the queries run.
 */
const fixture: Array<[number, string, number, Record<string, unknown>]> = [
  [1, 'game', 1, { severity: 'warn', source: 'eu-west-1', event: 'player.join', actor: 'alice', message: 'connection lost to server', payload: { map: 'dust', ping: 200, region: 'eu-north' } }],
  [2, 'game', 5, { severity: 'error', source: 'srv-1', event: 'player.leave', actor: 'bot-7', message: 'Connection LOST', payload: { map: 'nuke', ping: 100 } }],
  [3, 'auth', 20, { severity: 'info', source: 'eu-west-1', event: 'login', actor: 'bob', message: 'ok' }],
  [4, 'auth', 2, { severity: 'fatal', source: 'srv-2', event: 'login.fail', message: 'connection lost', payload: { map: 'dust' } }],
  [5, 'matchmaking', 3, { severity: 'info', source: 'eu-west-1', event: 'match.start', payload: { region: 'eu-west', ping: 151 } }],
  [6, 'matchmaking', 30, { severity: 'warn', event: 'match.start', payload: { region: 'us-east', ping: 300 } }],
  [7, 'matchmaking', 4, { severity: 'debug', event: 'match.start', payload: { region: 'EU-central' } }],
  [8, 'game', 6, { severity: 'error', source: 'eu-west-1', event: 'player.join', actor: 'bot-3', message: 'kicked', payload: { map: 'dust' } }],
  [9, 'matchmaking', 7, { severity: 'info', event: 'Match.Start', payload: { region: 'eu-x' } }],
  [10, 'game', 8, { severity: 'info', event: 'player.join', message: 'hello' }],
  [11, 'old', 9, { severity: 'error', source: 'eu-west-1', event: 'player.join', message: 'connection lost', payload: { map: 'dust', ping: 999, region: 'eu-old' } }],
  [12, 'game', 10, { severity: 'error', event: 'crash', message: 'all good' }],
];

/** Every example of SOQL.md, with exactly the events (newest first) or groups it returns. */
const examples: Array<[string, string[] | { field: string; groups: Array<{ value: unknown; count: number }> }]> = [
  ['severity >= warn', ['e1', 'e4', 'e2', 'e8', 'e12', 'e6']],
  ['source:eu-west-1 AND severity >= error', ['e8']],
  ['dataset:matchmaking AND event == "match.start" AND payload.region:eu*', ['e5', 'e7']],
  ['payload.ping > 150 AND ts >= now-15m', ['e1', 'e5']],
  ['(event:player.join OR event:player.leave) AND NOT actor:bot-*', ['e1', 'e10']],
  ['"connection lost" AND source:srv-*', ['e4', 'e2']],
  [
    'dataset in (game, auth) AND severity >= warn group by source',
    { field: 'source', groups: [{ value: 'eu-west-1', count: 2 }, { value: 'srv-1', count: 1 }, { value: 'srv-2', count: 1 }, { value: null, count: 1 }] },
  ],
  ['severity >= error group by payload.map', { field: 'payload.map', groups: [{ value: 'dust', count: 2 }, { value: 'nuke', count: 1 }, { value: null, count: 1 }] }],
];

describe('POST /v1/query', () => {
  let s: TestServer;
  let now: number;
  before(async () => {
    s = await startTestServer();
    now = s.clock.now();
    const byDataset = new Map<string, unknown[]>();
    for (const [n, dataset, ago, fields] of fixture) {
      const list = byDataset.get(dataset) ?? [];
      list.push({ event_id: id(n), ts: new Date(now - ago * min).toISOString(), ...fields });
      byDataset.set(dataset, list);
    }
    for (const [dataset, events] of byDataset) {
      const r = await s.request('POST', `/datasets/${dataset}/ingest`, { json: events });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.ingested, events.length, r.text);
    }
    // The same events in another tenant: never visible to tenant a.
    const r = await s.request('POST', '/datasets/game/ingest', { token: s.tenants.b.token, json: fixture.map(([n, , ago, f]) => ({ event_id: id(n), ts: now - ago * min, ...f })) });
    assert.equal(r.status, 200, r.text);
    assert.equal((await s.request('DELETE', '/datasets/old')).status, 200);
  });
  after(() => s.close());

  const query = (q: string, options: { cursor?: string; token?: string } = {}) =>
    s.request('POST', '/query', { json: { q, ...(options.cursor !== undefined ? { cursor: options.cursor } : {}) }, ...(options.token ? { token: options.token } : {}) });

  for (const [q, expected] of examples) {
    test(`SOQL.md example: ${q}`, async () => {
      const r = await query(q);
      assert.equal(r.status, 200, r.text);
      if (Array.isArray(expected)) {
        assert.deepEqual(r.body.events.map((e: { event_id: string }) => nameOf(e.event_id)), expected);
        assert.equal(r.body.next_cursor, '');
        assert.equal(r.body.has_more, false);
        // The in-memory predicate (live tail) selects the same events from tenant a's active datasets.
        const { store } = s.server.events;
        const stored = (await store.query(s.tenants.a, { filter: matchAll, limit: 1000 })).events.filter((e) => e.dataset !== 'old');
        const matches = compilePredicate(parseSoql(q), { now: s.clock.now() });
        assert.deepEqual(stored.filter((e) => matches(e)).map((e) => nameOf(e.event_id)), expected);
      } else {
        assert.deepEqual(r.body, expected);
      }
    });
  }

  test('events have the API shape: tenant from the caller, ISO ms times, names', async () => {
    const r = await query('event == "login.fail"');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.events.length, 1);
    const e = r.body.events[0];
    assert.equal(typeof e.ingested_at, 'string');
    assert.match(e.ingested_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(
      { ...e, ingested_at: 'x', bytes_raw: typeof e.bytes_raw },
      {
        event_id: id(4),
        ts: new Date(now - 2 * min).toISOString(),
        ingested_at: 'x',
        org_id: s.tenants.a.orgId,
        project_id: s.tenants.a.projectId,
        dataset: 'auth',
        severity: 'fatal',
        event: 'login.fail',
        source: 'srv-2',
        message: 'connection lost',
        payload: { map: 'dust' },
        bytes_raw: 'number',
      },
    );
  });

  test('the empty query matches every event of the active datasets; archived ones are never searched', async () => {
    const r = await query('');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.events.length, 11);
    assert.ok(!r.body.events.some((e: { dataset: string }) => e.dataset === 'old'));
    const groups = await query('group by dataset');
    assert.deepEqual(groups.body, {
      field: 'dataset',
      groups: [{ value: 'game', count: 5 }, { value: 'matchmaking', count: 4 }, { value: 'auth', count: 2 }],
    });
  });

  test('group by canonical fields: severity names, ISO times, missing values as one null group', async () => {
    let r = await query('group by severity');
    assert.deepEqual(r.body.groups, [
      { value: 'error', count: 3 },
      { value: 'info', count: 4 },
      { value: 'warn', count: 2 },
      { value: 'debug', count: 1 },
      { value: 'fatal', count: 1 },
    ].sort((a, b) => b.count - a.count || ['debug', 'info', 'warn', 'error', 'fatal'].indexOf(a.value) - ['debug', 'info', 'warn', 'error', 'fatal'].indexOf(b.value)));
    r = await query('event:login group by ts');
    assert.deepEqual(r.body.groups, [
      { value: new Date(now - 20 * min).toISOString(), count: 1 },
      { value: new Date(now - 2 * min).toISOString(), count: 1 },
    ]);
    r = await query('dataset:game group by actor');
    assert.deepEqual(r.body, { field: 'actor', groups: [{ value: null, count: 2 }, { value: 'alice', count: 1 }, { value: 'bot-3', count: 1 }, { value: 'bot-7', count: 1 }].sort((a, b) => b.count - a.count) });
    r = await query('group by payload.ping');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.groups, [{ value: null, count: 7 }, { value: 100, count: 1 }, { value: 151, count: 1 }, { value: 200, count: 1 }, { value: 300, count: 1 }]);
  });

  test('a dataset that does not exist, or is archived, is 404 not_found', async () => {
    for (const q of ['dataset:nope', 'dataset == old AND severity >= warn', 'dataset in (game, nope)', 'dataset:nope group by source']) {
      const r = await query(q);
      assert.equal(r.status, 404, `${q}: ${r.text}`);
      assert.equal(r.body.error.code, 'not_found');
    }
  });

  test('SOQL errors are 400 with position, near and field', async () => {
    let r = await query('ts >= banana');
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'soql_parse_error');
    assert.equal(r.body.error.position, 6);
    assert.equal(r.body.error.near, 'banana');
    assert.equal(r.body.error.field, 'ts');
    assert.equal(typeof r.body.error.request_id, 'string');
    r = await query('severity >= warn AND (source:x');
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'soql_parse_error');
    assert.equal(typeof r.body.error.position, 'number');
    r = await query('org_id:abc');
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'soql_reserved_field');
    r = await query('severity >= warn AND `project_id` == x');
    assert.equal(r.body.error.code, 'soql_reserved_field');
    r = await query('x'.repeat(5000));
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'soql_parse_error');
  });

  test('malformed requests are 400 bad_request; wrong scope 403; no token 401', async () => {
    for (const json of [{}, { cursor: 'x' }, { q: { a: 1 } }, [1]]) {
      const r = await s.request('POST', '/query', { json });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'bad_request');
    }
    const r = await s.request('POST', '/query', { body: '{nope', headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 400);
    assert.equal((await s.request('POST', '/query', { json: { q: '' }, token: null })).status, 401);
    const writeOnly = await s.token(s.tenants.a, ['logs:write']);
    const forbidden = await s.request('POST', '/query', { json: { q: '' }, token: writeOnly });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error.required_scope, 'logs:read');
  });

  test('tenant matrix: other org, project and mode see nothing of tenant a', async () => {
    for (const other of [s.tenants.aTest, s.tenants.aOther]) {
      const r = await query('', { token: other.token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { events: [], next_cursor: '', has_more: false });
      assert.deepEqual((await query('group by source', { token: other.token })).body, { field: 'source', groups: [] });
      assert.equal((await query('dataset:matchmaking', { token: other.token })).status, 404);
    }
    // b has its own copy of the events (in dataset game): it sees exactly those, with its own ids.
    const r = await query('severity >= warn', { token: s.tenants.b.token });
    assert.deepEqual(r.body.events.map((e: { event_id: string }) => nameOf(e.event_id)), ['e1', 'e4', 'e2', 'e8', 'e11', 'e12', 'e6']);
    assert.ok(r.body.events.every((e: { org_id: string; dataset: string }) => e.org_id === s.tenants.b.orgId && e.dataset === 'game'));
  });

  test('OpenAPI declares POST /query with both result shapes', async () => {
    const r = await s.request('GET', '/openapi.json');
    assert.equal(r.status, 200);
    const op = r.body.paths['/v1/query']?.post ?? r.body.paths['/query']?.post;
    assert.ok(op, Object.keys(r.body.paths).join(', '));
    const schema = JSON.stringify(op.responses['200']);
    for (const key of ['next_cursor', 'has_more', 'groups', 'payload', 'bytes_raw']) assert.ok(schema.includes(key), key);
  });
});
