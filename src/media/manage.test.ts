import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestTenant } from '../test-support/test-server.js';
import { png } from '../test-support/media/test-files.js';

describe('GET /media, GET /media/{id}, DELETE /media/{id}', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const upload = async (tenant: TestTenant, extra: { folder?: string; tags?: string[] } = {}) => {
    const res = await s.request('POST', '/media/base64', { token: tenant.token, json: { filename: 'p.png', content_type: 'image/png', data: png().toString('base64'), ...extra } });
    assert.equal(res.status, 201, res.text);
    return res.body as { id: string; url: string };
  };

  test('the list is newest first, paged by cursor, filtered by folder and tag', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await upload(s.tenants.a, { folder: i % 2 ? 'odd' : 'even', tags: i === 4 ? ['last', 'x'] : ['x'] })).id);
      s.clock.advance(1);
    }
    const first = await s.request('GET', '/media?limit=2');
    assert.deepEqual(first.body.files.map((f: { id: string }) => f.id), [ids[4], ids[3]]);
    assert.equal(first.body.has_more, true);
    const second = await s.request('GET', `/media?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    assert.deepEqual(second.body.files.map((f: { id: string }) => f.id), [ids[2], ids[1]]);
    const third = await s.request('GET', `/media?limit=2&cursor=${encodeURIComponent(second.body.next_cursor)}`);
    assert.deepEqual(third.body.files.map((f: { id: string }) => f.id), [ids[0]]);
    assert.equal(third.body.next_cursor, '');
    assert.equal(third.body.has_more, false);
    assert.deepEqual((await s.request('GET', '/media?folder=odd')).body.files.map((f: { id: string }) => f.id), [ids[3], ids[1]]);
    assert.deepEqual((await s.request('GET', '/media?tag=last')).body.files.map((f: { id: string }) => f.id), [ids[4]]);
    assert.equal((await s.request('GET', '/media?tag=x')).body.files.length, 5);
    assert.equal((await s.request('GET', '/media?tag=las')).body.files.length, 0);
  });

  test('the list writes each file as GET /media/{id} does, as plain JSON text, asked again or not', async () => {
    await upload(s.tenants.a, { folder: 'a "quoted" folder', tags: ['ünï', 'émoji-😀'] });
    for (let round = 0; round < 2; round++) {
      const list = await s.request('GET', '/media?limit=3');
      assert.equal(list.status, 200);
      assert.equal(list.headers.get('content-type'), 'application/json; charset=utf-8');
      // Keys in the schema's order, nothing left out or added: the text JSON.stringify writes.
      assert.equal(list.text, JSON.stringify(list.body));
      assert.deepEqual(Object.keys(list.body), ['files', 'next_cursor', 'has_more']);
      for (const file of list.body.files as Array<{ id: string }>) {
        const one = await s.request('GET', `/media/${file.id}`);
        assert.equal(JSON.stringify(file), one.text);
      }
    }
  });

  test('limit outside 1..100 and a tampered cursor → 400', async () => {
    assert.equal((await s.request('GET', '/media?limit=0')).status, 400);
    assert.equal((await s.request('GET', '/media?limit=101')).status, 400);
    assert.equal((await s.request('GET', '/media?cursor=abc.def')).status, 400);
  });

  test('a cursor of one filter is refused by another list', async () => {
    const page = await s.request('GET', '/media?limit=1');
    assert.equal((await s.request('GET', `/media?limit=1&folder=odd&cursor=${encodeURIComponent(page.body.next_cursor)}`)).status, 400);
  });

  test('tenant matrix: other org, other project and other mode see nothing, and cannot get, delete or reuse cursors', async () => {
    const file = await upload(s.tenants.a);
    const page = await s.request('GET', '/media?limit=1');
    for (const other of [s.tenants.b, s.tenants.aOther, s.tenants.aTest]) {
      const list = await s.request('GET', '/media', { token: other.token });
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.files, []);
      assert.equal((await s.request('GET', `/media/${file.id}`, { token: other.token })).status, 404);
      assert.equal((await s.request('DELETE', `/media/${file.id}`, { token: other.token })).status, 404);
      const foreign = await s.request('GET', `/media?cursor=${encodeURIComponent(page.body.next_cursor)}`, { token: other.token });
      assert.equal(foreign.status, 400);
    }
    const mine = await upload(s.tenants.aTest);
    assert.deepEqual((await s.request('GET', '/media', { token: s.tenants.aTest.token })).body.files.map((f: { id: string }) => f.id), [mine.id]);
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 200);
  });

  test('GET one file; DELETE soft-deletes with purges_at = now + 30 days; then absent from GET and lists; second DELETE 404', async () => {
    const file = await upload(s.tenants.a);
    const got = await s.request('GET', `/media/${file.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.id, file.id);
    const now = s.server.ctx.clock.now();
    const del = await s.request('DELETE', `/media/${file.id}`);
    assert.equal(del.status, 200);
    assert.equal(del.body.id, file.id);
    assert.equal(del.body.deleted, true);
    const purgesAt = Date.parse(del.body.purges_at);
    assert.ok(Math.abs(purgesAt - (now + 30 * 86_400_000)) < 5_000);
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 404);
    assert.ok(!(await s.request('GET', '/media?limit=100')).body.files.some((f: { id: string }) => f.id === file.id));
    assert.equal((await s.request('DELETE', `/media/${file.id}`)).status, 404);
    assert.equal((await fetch(file.url)).status, 200, 'still delivered during the window');
  });

  test('scopes: media:write alone cannot list (403); media:read cannot delete (403)', async () => {
    const writer = await s.token(s.tenants.a, ['media:write']);
    const reader = await s.token(s.tenants.a, ['media:read']);
    assert.equal((await s.request('GET', '/media', { token: writer })).status, 403);
    assert.equal((await s.request('DELETE', '/media/f_01ARZ3NDEKTSV4RRFFQ69G5FAV', { token: reader })).status, 403);
    assert.equal((await s.request('GET', '/media/f_01ARZ3NDEKTSV4RRFFQ69G5FAV', { token: reader })).status, 404);
  });
});
