import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

const total = 10_000;
const min = 60_000;

describe('POST /v1/query pagination and cursors', () => {
  let s: TestServer;
  let base: number;
  before(async () => {
    s = await startTestServer();
    base = s.clock.now() - 60 * min;
    // 10,000 events over 50 minutes with many equal timestamps (ties order by event_id).
    const events = Array.from({ length: total }, (_, i) => ({
      ts: base + Math.floor(i / 7) * 2_000,
      severity: i % 3 === 0 ? 'error' : 'info',
      event: 'tick',
      payload: { i },
    }));
    const r = await s.request('POST', '/datasets/load/ingest', { json: events });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.ingested, total);
  });
  after(() => s.close());

  const query = (q: string, cursor?: string, token?: string) =>
    s.request('POST', '/query', { json: { q, ...(cursor !== undefined ? { cursor } : {}) }, ...(token ? { token } : {}) });

  const visitAll = async (q: string, between?: (page: number) => Promise<void>) => {
    const seen: Array<{ event_id: string; ts: string; payload: { i?: number } }> = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1_000; page++) {
      const r = await query(q, cursor);
      assert.equal(r.status, 200, r.text);
      assert.ok(r.body.events.length <= 100);
      seen.push(...r.body.events);
      assert.equal(r.body.has_more, r.body.next_cursor !== '');
      if (!r.body.has_more) return seen;
      assert.equal(r.body.events.length, 100);
      cursor = r.body.next_cursor;
      await between?.(page);
    }
    throw new Error('pagination did not end');
  };

  const assertNewestFirst = (events: Array<{ event_id: string; ts: string }>) => {
    for (let k = 1; k < events.length; k++) {
      const [a, b] = [events[k - 1]!, events[k]!];
      assert.ok(a.ts > b.ts || (a.ts === b.ts && a.event_id > b.event_id), `order at ${k}`);
    }
  };

  test('10,000 events: every event exactly once, newest first, 100 per page', async () => {
    const seen = await visitAll('');
    assert.equal(seen.length, total);
    assert.equal(new Set(seen.map((e) => e.event_id)).size, total);
    assert.deepEqual(new Set(seen.map((e) => e.payload.i)), new Set(Array.from({ length: total }, (_, i) => i)));
    assertNewestFirst(seen);
  });

  test('also while new events arrive, and with a relative time pinned by the cursor', async () => {
    let added = 0;
    const q = 'event:tick AND ts >= now-70m';
    const seen = await visitAll(q, async (page) => {
      if (page % 10 !== 0) return;
      // New events (newer than every page served) and a moving clock: the cursor keeps `now`.
      const r = await s.request('POST', '/datasets/load/ingest', { json: Array.from({ length: 25 }, () => ({ event: 'tick', payload: { late: true } })) });
      assert.equal(r.status, 200, r.text);
      added += 25;
      s.clock.advance(3 * min);
    });
    assert.ok(added >= 250);
    const original = seen.filter((e) => e.payload.i !== undefined);
    assert.equal(original.length, total);
    assert.equal(new Set(seen.map((e) => e.event_id)).size, seen.length, 'no event twice');
    assertNewestFirst(seen);
  });

  test('a filtered query pages through exactly its matches', async () => {
    const seen = await visitAll('severity:error AND payload.i < 5000');
    const expected = Array.from({ length: 5000 }, (_, i) => i).filter((i) => i % 3 === 0);
    assert.deepEqual(seen.map((e) => e.payload.i).sort((a, b) => a! - b!), expected);
  });

  test('cursors are bound to tenant and query; tampered ones are 400', async () => {
    const first = await query('severity:error');
    const cursor: string = first.body.next_cursor;
    assert.ok(cursor);
    // Same query in another spelling (keyword case, spaces) is the same list.
    const again = await query('  SEVERITY : error ', cursor);
    assert.equal(again.status, 200, again.text);
    for (const [q, c, token] of [
      ['severity:info', cursor, undefined],
      ['severity:error', cursor, s.tenants.b.token],
      ['severity:error', cursor, s.tenants.aTest.token],
      ['severity:error', cursor, s.tenants.aOther.token],
      ['severity:error', `${cursor.slice(0, 10)}${cursor[10] === 'A' ? 'B' : 'A'}${cursor.slice(11)}`, undefined],
      ['severity:error', `${cursor}x`, undefined],
      ['severity:error', 'garbage', undefined],
      ['severity:error group by source', cursor, undefined],
    ] as const) {
      const r = await query(q, c, token);
      assert.equal(r.status, 400, `${q} ${token ?? ''}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_request');
    }
    // An empty cursor is the first page.
    assert.equal((await query('severity:error', '')).status, 200);
  });

  test('random strings as q are answered 200 or a 400 SOQL error, never anything else', async () => {
    const soqlish = fc.stringMatching(/^[a-z.:!=<>()"`*\- 0-9\\@$]{0,40}$/);
    const bytes = fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('latin1'));
    const tokens = fc
      .array(fc.constantFrom('severity', '>=', 'warn', 'AND', 'OR', 'NOT', '(', ')', 'payload.x', ':', '"a', 'group', 'by', 'in', ',', 'exists', 'now-5m', 'ts', '\u0000', '\ud800', '`', 'dataset', 'null', '1e999', '-1h'), { maxLength: 12 })
      .map((t) => t.join(' '));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 60, unit: 'binary' }), bytes, soqlish, tokens), async (q) => {
        const r = await query(q);
        if (r.status === 200) return;
        assert.ok(r.status === 400 || r.status === 404, `${JSON.stringify(q)}: ${r.status} ${r.text}`);
        const allowed = r.status === 400 ? ['soql_parse_error', 'soql_reserved_field'] : ['not_found'];
        assert.ok(allowed.includes(r.body.error.code), `${JSON.stringify(q)}: ${r.text}`);
      }),
      { numRuns: 400 },
    );
  });
});

describe('POST /v1/query quota', () => {
  let s: TestServer;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-plans-'));
    const file = path.join(dir, 'plans.json');
    const tiny = { max_file_bytes: 1_000_000, storage_bytes: null, datasets: 5, retention_days: 7, live_tail: false, events_month: null, queries_month: 3 };
    fs.writeFileSync(file, JSON.stringify({ plans: { tiny } }));
    s = await startTestServer({ plan: 'tiny', env: { OPS_PLANS_FILE: file } });
  });
  after(async () => {
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('each request counts toward queries_month; past it 402 quota_exceeded', async () => {
    for (let k = 0; k < 3; k++) assert.equal((await s.request('POST', '/query', { json: { q: 'severity >= warn' } })).status, 200);
    const r = await s.request('POST', '/query', { json: { q: 'severity >= warn group by source' } });
    assert.equal(r.status, 402, r.text);
    assert.equal(r.body.error.code, 'quota_exceeded');
    assert.equal(r.body.error.metric, 'queries_month');
    // Other organisations keep their own counter.
    assert.equal((await s.request('POST', '/query', { json: { q: '' }, token: s.tenants.b.token })).status, 200);
    // Upgrading lifts it.
    await s.server.ctx.orgs.setPlan(s.tenants.a.orgId, 'pro');
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the token lookup caches the plan for 1 s
    assert.equal((await s.request('POST', '/query', { json: { q: '' } })).status, 200);
  });
});
