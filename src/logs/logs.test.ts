import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestTenant } from '../test-support/test-server.js';
import { TailClient } from '../test-support/tail/test-client.js';
import { eventIdOf, logIdOf } from './log-id.js';

const isoMs = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('log entries (OPS_FEATURES=logs)', () => {
  let s: TestServer;
  let others: Array<[string, TestTenant]>;
  before(async () => {
    s = await startTestServer({ env: { OPS_FEATURES: 'logs,cases,apps', OPS_TAIL_HEARTBEAT_MS: '60000', OPS_TAIL_IDLE_TIMEOUT_MS: '60000', OPS_TAIL_POLL_MS: '100' } });
    others = [
      ['test mode', s.tenants.aTest],
      ['other project', s.tenants.aOther],
      ['other org', s.tenants.b],
    ];
  });
  after(() => s.close());

  const post = (json: unknown, token = s.tenants.a.token) => s.request('POST', '/logs', { token, json });

  test('log ids and event ids map both ways; a v7 event id gives a time-sorted ULID', () => {
    const eventId = '01936a4b-7c2e-7d3f-8a1b-2c3d4e5f6a7b';
    const id = logIdOf(eventId);
    assert.match(id, /^log_[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    assert.equal(eventIdOf(id), eventId);
    assert.equal(eventIdOf(id.toLowerCase()), eventId, 'ULIDs are case-insensitive');
    assert.equal(eventIdOf('log_nope'), undefined);
    assert.equal(eventIdOf('cas_01J00000000000000000000000'), undefined);
    assert.equal(eventIdOf('log_81J00000000000000000000000'), undefined, 'more than 128 bits');
  });

  test('meta nested past the payload bounds is 400 bad_request, not a stack overflow (500)', async () => {
    const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    for (const levels of [33, 5_000]) {
      const res = await s.request('POST', '/logs', { body: `{"level":"info","message":"deep","meta":${deep(levels)}}`, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, 'bad_request');
      assert.match(res.body.error.message, /meta nests objects and arrays more than 32 levels/);
    }
    const wide = Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i]));
    const res = await post({ level: 'info', message: 'wide', meta: wide });
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.error.message, /meta has more than 1000 keys/);
    assert.equal((await post({ level: 'info', message: 'ok', meta: JSON.parse(deep(32)) as object })).status, 201);
  });

  test('a lone surrogate in meta is stored as U+FFFD: the entry and every list after it still read', async () => {
    const res = await s.request('POST', '/logs', { body: '{"level":"info","message":"lone","meta":{"k":"a\\ud800b"}}', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 201, res.text);
    const id = (res.body as { id: string }).id;
    const one = await s.request('GET', `/logs/${id}`);
    assert.equal(one.status, 200, one.text);
    assert.deepEqual((one.body as { meta: unknown }).meta, { k: 'a\ufffdb' });
    assert.equal((await s.request('GET', '/logs?limit=100')).status, 200);
  });

  test('POST /logs: 201 with every field of the Log entry shape; GET /logs/{id} returns it', async () => {
    const r = await post({ level: 'warn', message: 'disk almost full', meta: { server: 'eu-1', used: 0.93, tags: ['a'] } });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['created_at', 'id', 'level', 'message', 'meta']);
    assert.match(r.body.id, /^log_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(r.body.level, 'warn');
    assert.equal(r.body.message, 'disk almost full');
    assert.deepEqual(r.body.meta, { server: 'eu-1', used: 0.93, tags: ['a'] });
    assert.match(r.body.created_at, isoMs);
    assert.ok(Math.abs(Date.parse(r.body.created_at) - s.clock.now()) < 5_000, 'created_at is the server clock at write time');
    const got = await s.request('GET', `/logs/${r.body.id}`);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body, r.body);
    const bare = await post({ level: 'info', message: 'no meta' });
    assert.deepEqual(bare.body.meta, {});
    assert.deepEqual((await s.request('GET', `/logs/${bare.body.id}`)).body.meta, {});
  });

  test('POST /logs: level and message required, level one of debug/info/warn/error/fatal; else 400', async () => {
    for (const json of [{}, { level: 'info' }, { message: 'm' }, { level: 'verbose', message: 'm' }, { level: 'warning', message: 'm' }, { level: 'info', message: 'm', meta: 'x' }, { level: 'info', message: 'm', meta: [1] }, []]) {
      const r = await post(json);
      assert.equal(r.status, 400, JSON.stringify(json));
      assert.equal(r.body.error.code, 'bad_request');
    }
    for (const level of ['debug', 'info', 'warn', 'error', 'fatal']) assert.equal((await post({ level, message: level })).status, 201, level);
  });

  test('GET /logs: newest first, limit/cursor, level and from/to filters; 400 for bad values', async () => {
    const token = s.tenants.aTest.token; // a tenant of its own
    const made: Array<{ id: string; level: string; created_at: string }> = [];
    const levels = ['debug', 'info', 'warn', 'error', 'fatal', 'info'];
    for (const level of levels) {
      s.clock.advance(10);
      made.push((await post({ level, message: `m ${level}` }, token)).body);
    }
    const seen: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const r = await s.request('GET', `/logs?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), ['has_more', 'logs', 'next_cursor']);
      assert.equal(r.body.has_more, r.body.next_cursor !== '');
      seen.push(...r.body.logs.map((l: { id: string }) => l.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 2);
    assert.deepEqual(seen, made.map((m) => m.id).reverse());

    const info = await s.request('GET', '/logs?level=info', { token });
    assert.deepEqual(info.body.logs.map((l: { id: string }) => l.id), [made[5]!.id, made[1]!.id]);
    const window = await s.request('GET', `/logs?from=${made[1]!.created_at}&to=${made[4]!.created_at}`, { token });
    assert.deepEqual(window.body.logs.map((l: { id: string }) => l.id), [made[3]!.id, made[2]!.id, made[1]!.id], 'from inclusive, to exclusive');
    const both = await s.request('GET', `/logs?level=info&from=${made[2]!.created_at}`, { token });
    assert.deepEqual(both.body.logs.map((l: { id: string }) => l.id), [made[5]!.id]);

    const page = await s.request('GET', '/logs?limit=1&level=info', { token });
    assert.ok(page.body.next_cursor);
    const next = await s.request('GET', `/logs?limit=1&level=info&cursor=${encodeURIComponent(page.body.next_cursor)}`, { token });
    assert.deepEqual(next.body.logs.map((l: { id: string }) => l.id), [made[1]!.id]);
    assert.equal((await s.request('GET', `/logs?level=warn&cursor=${encodeURIComponent(page.body.next_cursor)}`, { token })).status, 400, 'a cursor belongs to its filters');

    for (const q of ['limit=0', 'limit=101', 'limit=x', 'level=verbose', 'from=yesterday', 'to=2026-13-01T00:00:00Z', `from=${made[4]!.created_at}&to=${made[1]!.created_at}`, 'cursor=abc']) {
      const r = await s.request('GET', `/logs?${q}`, { token });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'bad_request');
    }
  });

  test('GET /logs/{id}: unknown or malformed ids are 404', async () => {
    for (const id of ['log_01J00000000000000000000000', 'log_x', 'nope', 'f_01J00000000000000000000000']) {
      const r = await s.request('GET', `/logs/${id}`);
      assert.equal(r.status, 404, id);
      assert.equal(r.body.error.code, 'not_found');
    }
  });

  test('tenant matrix: another org, project or mode sees none of the entries and cannot use their cursors', async () => {
    const { body: entry } = await post({ level: 'error', message: 'private' });
    await post({ level: 'error', message: 'private 2' });
    const first = await s.request('GET', '/logs?limit=1');
    assert.ok(first.body.next_cursor);
    for (const [what, tenant] of others) {
      const got = await s.request('GET', `/logs/${entry.id}`, { token: tenant.token });
      assert.equal(got.status, 404, what);
      const list = await s.request('GET', '/logs?limit=100', { token: tenant.token });
      assert.equal(list.status, 200);
      assert.ok(!list.body.logs.some((l: { id: string }) => l.id === entry.id), what);
      const cursor = await s.request('GET', `/logs?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: tenant.token });
      assert.equal(cursor.status, 400, what);
    }
  });

  test('an entry is an event of the dataset `logs`: found by POST /query with dataset:logs', async () => {
    const { body: entry } = await post({ level: 'fatal', message: 'found by soql', meta: { shard: 7 } });
    const r = await s.request('POST', '/query', { json: { q: 'dataset:logs AND message == "found by soql"' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.events.length, 1);
    const event = r.body.events[0];
    assert.equal(event.event_id, eventIdOf(entry.id));
    assert.equal(event.dataset, 'logs');
    assert.equal(event.severity, 'fatal');
    assert.equal(event.message, 'found by soql');
    assert.deepEqual(event.payload, { shard: 7 });
    assert.equal(event.ts, entry.created_at);
    const bySeverity = await s.request('POST', '/query', { json: { q: 'dataset:logs AND severity >= fatal AND payload.shard == 7' } });
    assert.equal(bySeverity.body.events.length, 1);
  });

  test('a log entry id sorts like its creation time', async () => {
    const first = await post({ level: 'info', message: 'first' });
    s.clock.advance(2);
    const second = await post({ level: 'info', message: 'second' });
    assert.ok(second.body.id > first.body.id);
  });

  test('an entry posted through /logs is delivered to an open live-tail session', async () => {
    await post({ level: 'info', message: 'before the session' });
    const opened = await TailClient.open(s.baseUrl, s.tenants.a.token, 'dataset:logs AND severity >= error');
    assert.equal(opened.status, 200, 'body' in opened ? JSON.stringify(opened.body) : '');
    const client = (opened as { client: TailClient }).client;
    try {
      await post({ level: 'warn', message: 'below the filter' });
      const { body: entry } = await post({ level: 'error', message: 'tailed', meta: { k: 'v' } });
      await client.until((c) => c.events.length >= 1, 5_000, 'the log entry');
      assert.equal(client.events.length, 1);
      const event = client.events[0]!.data;
      assert.equal(event.event_id, eventIdOf(entry.id));
      assert.equal(event.message, 'tailed');
      assert.equal(event.severity, 'error');
      assert.deepEqual(event.payload, { k: 'v' });
    } finally {
      await client.close();
    }
  });

  test('events ingested into the dataset `logs` directly are log entries too', async () => {
    const token = await s.token(s.tenants.aOther, 'all', { mode: 'test' });
    const r = await s.request('POST', '/datasets/logs/ingest', { token, json: [{ severity: 'critical', message: 'raw', payload: { x: 1 } }] });
    assert.equal(r.status, 200, r.text);
    const list = await s.request('GET', '/logs', { token });
    assert.equal(list.body.logs.length, 1);
    assert.equal(list.body.logs[0].level, 'fatal');
    assert.deepEqual(list.body.logs[0].meta, { x: 1 });
    assert.equal((await s.request('GET', `/logs/${list.body.logs[0].id}`, { token })).body.message, 'raw');
  });

  test('at the plan cap of datasets, entries overflow into `default` and are still log entries', async () => {
    const b = s.tenants.b; // free plan: 3 datasets
    for (const name of ['one', 'two', 'three']) {
      assert.equal((await s.request('POST', `/datasets/${name}/ingest`, { token: b.token, json: [{ message: name }] })).status, 200);
    }
    const r = await post({ level: 'info', message: 'overflowed', meta: { a: 1 } }, b.token);
    assert.equal(r.status, 201, r.text);
    const list = await s.request('GET', '/logs', { token: b.token });
    assert.deepEqual(list.body.logs.map((l: { id: string }) => l.id), [r.body.id]);
    assert.deepEqual(list.body.logs[0].meta, { a: 1 }, 'the overflow marker is not part of meta');
    assert.equal((await s.request('GET', `/logs/${r.body.id}`, { token: b.token })).status, 200);
  });

  test('events_month applies: 402 quota_exceeded and nothing stored', async () => {
    const { ctx } = s.server;
    const a = s.tenants.a;
    const before = (await ctx.quotas.usage(a.orgId, 'pro')).find((q) => q.metric === 'events_month')!;
    const fill = before.limit! - before.used;
    await ctx.quotas.consume(a.orgId, 'pro', 'events_month', fill);
    try {
      const r = await post({ level: 'info', message: 'over quota' });
      assert.equal(r.status, 402, r.text);
      assert.equal(r.body.error.code, 'quota_exceeded');
      assert.equal(r.body.error.metric, 'events_month');
      assert.ok(Array.isArray(r.body.error.quotas));
      const list = await s.request('GET', '/logs?limit=100');
      assert.ok(!list.body.logs.some((l: { message: string }) => l.message === 'over quota'));
    } finally {
      await ctx.quotas.release(a.orgId, 'events_month', fill);
    }
    const counted = (await ctx.quotas.usage(a.orgId, 'pro')).find((q) => q.metric === 'events_month')!;
    assert.equal(counted.used, before.used);
    assert.equal((await post({ level: 'info', message: 'counted' })).status, 201);
    assert.equal((await ctx.quotas.usage(a.orgId, 'pro')).find((q) => q.metric === 'events_month')!.used, before.used + 1);
  });

  test('scopes: logs:write to post, logs:read to read; 401 without a token', async () => {
    const { body: entry } = await post({ level: 'info', message: 'scoped' });
    const readOnly = await s.token(s.tenants.a, ['logs:read']);
    const writeOnly = await s.token(s.tenants.a, ['logs:write']);
    const denied = await post({ level: 'info', message: 'x' }, readOnly);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.required_scope, 'logs:write');
    assert.equal((await s.request('POST', '/logs', { token: null, json: { level: 'info', message: 'x' } })).status, 401);
    for (const path of ['/logs', `/logs/${entry.id}`]) {
      const r = await s.request('GET', path, { token: writeOnly });
      assert.equal(r.status, 403);
      assert.equal(r.body.error.required_scope, 'logs:read');
      assert.equal((await s.request('GET', path, { token: readOnly })).status, 200);
      assert.equal((await s.request('GET', path, { token: null })).status, 401);
    }
  });
});
