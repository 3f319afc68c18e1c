import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

// POST /query answers are kept whole and served again while the tenant's events and datasets
// are unchanged (kept-answers.ts): every change a fresh run would see must show in the next answer.
describe('POST /v1/query: answers served again only while nothing they show changed', () => {
  let s: TestServer;
  const min = 60_000;
  before(async () => {
    s = await startTestServer();
    const now = s.clock.now();
    // 150 events a minute apart in "kept", newest first from now: two pages.
    const events = Array.from({ length: 150 }, (_, i) => ({ ts: now - i * min, event: 'tick', payload: { i } }));
    assert.equal((await s.request('POST', '/datasets/kept/ingest', { json: events })).status, 200);
    assert.equal((await s.request('POST', '/datasets/other/ingest', { json: [{ ts: now, event: 'other' }] })).status, 200);
  });
  after(() => s.close());

  const query = (q: string, cursor?: string, token?: string) =>
    s.request('POST', '/query', { json: { q, ...(cursor !== undefined ? { cursor } : {}) }, ...(token ? { token } : {}) });

  test('the same query asked again answers the same bytes, cursor included (it holds no `now` without relative times)', async () => {
    const first = await query('dataset:kept');
    s.clock.advance(5_000);
    const second = await query('dataset:kept');
    assert.equal(first.status, 200, first.text);
    assert.equal(second.text, first.text);
    assert.equal(first.body.events.length, 100);
    assert.ok(first.body.next_cursor);
    const next = await query('dataset:kept', first.body.next_cursor);
    assert.equal(next.status, 200, next.text);
    assert.deepEqual(
      next.body.events.map((e: { payload: { i: number } }) => e.payload.i),
      Array.from({ length: 50 }, (_, i) => 100 + i),
    );
    assert.equal(next.body.has_more, false);
    assert.equal((await query('dataset:kept', first.body.next_cursor)).text, next.text);
  });

  test('an ingest between two identical queries changes the answer, first page and next', async () => {
    const first = await query('dataset:kept');
    const page2 = await query('dataset:kept', first.body.next_cursor);
    const ts = new Date(s.clock.now() - 30_000).toISOString();
    const r = await s.request('POST', '/datasets/kept/ingest', { json: [{ ts, event: 'late', payload: { late: true } }] });
    assert.equal(r.status, 200, r.text);
    const again = await query('dataset:kept');
    assert.notEqual(again.text, first.text);
    assert.equal(again.body.events[1].event, 'late');
    // The old cursor still reads after its position: the page behind it moved by the new event only if newer, so it holds.
    const page2Again = await query('dataset:kept', first.body.next_cursor);
    assert.equal(page2Again.status, 200);
    assert.deepEqual(page2Again.body.events, page2.body.events);
    // An event older than the cursor's position shows on the page after it.
    const old = new Date(s.clock.now() - 1000 * min).toISOString();
    assert.equal((await s.request('POST', '/datasets/kept/ingest', { json: [{ ts: old, event: 'oldest' }] })).status, 200);
    const page2Third = await query('dataset:kept', first.body.next_cursor);
    assert.equal(page2Third.body.events.at(-1).event, 'oldest');
  });

  test("a rename or an archive of a dataset shows in the next answer", async () => {
    const before = await query('dataset:other OR event:tick');
    assert.ok(before.body.events.some((e: { dataset: string }) => e.dataset === 'other'));
    const renamed = await s.request('PATCH', '/datasets/other', { json: { name: 'renamed' } });
    assert.equal(renamed.status, 200, renamed.text);
    const unknown = await query('dataset:other OR event:tick');
    assert.equal(unknown.status, 404, unknown.text);
    const after = await query('dataset:renamed OR event:tick');
    assert.equal(after.status, 200, after.text);
    assert.ok(after.body.events.some((e: { dataset: string }) => e.dataset === 'renamed'));
    const all = await query('');
    assert.ok(all.body.events.some((e: { dataset: string }) => e.dataset === 'renamed'));
    assert.equal((await s.request('DELETE', '/datasets/renamed')).status, 200);
    const archived = await query('');
    assert.equal(archived.status, 200, archived.text);
    assert.ok(!archived.body.events.some((e: { dataset: string }) => e.dataset === 'renamed'));
    assert.notEqual(archived.text, all.text);
  });

  test('relative times still move: the same `ts >= now-…` query answers less as the clock passes', async () => {
    // The token's last use is written at most once a minute, and any write to the metadata
    // database refreshes kept answers: start a fresh minute, so within it only `now` moves.
    s.clock.advance(61_000);
    const now = s.clock.now();
    const events = Array.from({ length: 30 }, (_, k) => ({ ts: now - k * 10_000, event: 'pulse' }));
    assert.equal((await s.request('POST', '/datasets/clock/ingest', { json: events })).status, 200);
    const q = 'dataset:clock AND ts >= now-1m';
    const first = await query(q);
    assert.equal(first.status, 200, first.text);
    assert.equal((await query(q)).text, first.text);
    const count = first.body.events.length;
    assert.ok(count >= 6 && count <= 7, String(count));
    s.clock.advance(25_000);
    const later = await query(q);
    assert.equal(later.status, 200, later.text);
    assert.ok(later.body.events.length <= count - 2, `${later.body.events.length} of ${count}`);
  });

  test('a cursor made before (with `now` for a query without relative times) still pages the same', async () => {
    const first = await query('dataset:kept');
    const body = JSON.parse(Buffer.from(first.body.next_cursor.split('.')[0], 'base64url').toString()) as { l: string; t: string; k: [number, string] };
    assert.equal(body.k.length, 2);
    const old = s.server.ctx.cursors.encode(body.l, body.t, [...body.k, s.clock.now() - 3_600_000]);
    const viaOld = await query('dataset:kept', old);
    assert.equal(viaOld.status, 200, viaOld.text);
    assert.deepEqual(viaOld.body, (await query('dataset:kept', first.body.next_cursor)).body);
  });

  test("a cursor is the tenant's own: another tenant's request with it is refused, kept answer or not", async () => {
    const first = await query('dataset:kept');
    const cursor: string = first.body.next_cursor;
    assert.equal((await query('dataset:kept', cursor)).status, 200);
    for (const tenant of [s.tenants.b, s.tenants.aTest, s.tenants.aOther]) {
      const r = await query('dataset:kept', cursor, tenant.token);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'bad_request');
    }
    // And with another query's text, or a cursor edited by a character.
    assert.equal((await query('dataset:kept AND event:tick', cursor)).status, 400);
    assert.equal((await query('dataset:kept', `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`)).status, 400);
  });
});

describe('POST /v1/query quota with answers served again', () => {
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

  test('the same query asked again is charged every time; past the quota 402', async () => {
    for (let k = 0; k < 3; k++) assert.equal((await s.request('POST', '/query', { json: { q: 'severity >= warn' } })).status, 200);
    const r = await s.request('POST', '/query', { json: { q: 'severity >= warn' } });
    assert.equal(r.status, 402, r.text);
    assert.equal(r.body.error.code, 'quota_exceeded');
  });
});
