import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestTenant } from '../test-support/test-server.js';
import { png } from '../test-support/media/test-files.js';

const day = 86_400_000;
const unknownId = 'f_01ARZ3NDEKTSV4RRFFQ69G5FAV';

interface Listed {
  id: string;
  deleted?: true;
  deleted_at?: string;
  purges_at?: string;
  updated_at: string;
}

/** Status of a delivery GET, body read so the connection is free again. */
const status = async (url: string) => {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.status;
};

describe('POST /media/{id}/restore and GET /media?deleted=true', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const upload = async (tenant: TestTenant = s.tenants.a, extra: { folder?: string; tags?: string[] } = {}) => {
    const res = await s.request('POST', '/media/base64', { token: tenant.token, json: { filename: 'p.png', content_type: 'image/png', data: png().toString('base64'), ...extra } });
    assert.equal(res.status, 201, res.text);
    return res.body as { id: string; url: string; size: number; created_at: string; updated_at: string };
  };
  const remove = async (id: string, tenant: TestTenant = s.tenants.a) => {
    const res = await s.request('DELETE', `/media/${id}`, { token: tenant.token });
    assert.equal(res.status, 200, res.text);
    return res.body as { purges_at: string };
  };
  const restore = (id: string, token?: string | null) => s.request('POST', `/media/${id}/restore`, { token });
  const ids = (res: { body: { files: Listed[] } }) => res.body.files.map((f) => f.id);
  const deletedIds = async (query = '', token?: string) => ids(await s.request('GET', `/media?deleted=true${query}`, { token }));
  const activeIds = async (query = '', token?: string) => ids(await s.request('GET', `/media?limit=100${query}`, { token }));
  const storageUsed = async () => (await s.server.ctx.quotas.usage(s.tenants.a.orgId, 'pro')).find((q) => q.metric === 'storage_bytes')!.used;

  test('restore brings a soft-deleted file back: 200 with the File of GET /media/{id}, listed, delivered, never purged; storage usage unchanged', async () => {
    const file = await upload(s.tenants.a, { folder: 'happy' });
    const usedBefore = await storageUsed();
    await remove(file.id);
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 404);
    assert.equal(await storageUsed(), usedBefore, 'a soft-deleted file still counts');
    s.clock.advance(1000);

    const res = await restore(file.id);
    assert.equal(res.status, 200, res.text);
    const got = await s.request('GET', `/media/${file.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(res.body, got.body, 'the same shape and values as GET /media/{id}');
    assert.equal(res.body.url, file.url, 'the delivery URL is the same');
    assert.equal(res.body.created_at, file.created_at);
    assert.ok(Date.parse(res.body.updated_at) > Date.parse(file.updated_at), 'updated_at is the time of the restore');
    assert.equal(res.body.deleted, undefined);
    assert.equal(res.body.purges_at, undefined);

    assert.deepEqual(await activeIds('&folder=happy'), [file.id]);
    assert.deepEqual(await deletedIds('&folder=happy'), []);
    assert.equal(await storageUsed(), usedBefore, 'restoring changes no usage');

    // Its old purge date passes: the restored file is not purged and is still delivered.
    s.clock.advance(31 * day);
    assert.equal((await s.server.media.purge()).purged, 0);
    assert.equal(await status(file.url), 200);
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 200);
    assert.equal(await storageUsed(), usedBefore);
  });

  test('restoring a file that is not deleted answers 200 with it and changes nothing (a retry is safe)', async () => {
    const file = await upload();
    const before = (await s.request('GET', `/media/${file.id}`)).body as Listed;
    s.clock.advance(1000);
    const res = await restore(file.id);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, before, 'updated_at is not moved by a restore that changes nothing');

    await remove(file.id);
    const first = await restore(file.id);
    // Idempotency-Key is not taken here (the call is idempotent by itself): the header changes nothing.
    const again = await s.request('POST', `/media/${file.id}/restore`, { headers: { 'idempotency-key': 'k1' } });
    assert.deepEqual([first.status, again.status], [200, 200]);
    assert.deepEqual(again.body, first.body);
  });

  test('tenant matrix: another org, project or mode gets 404 for the id, and the file stays deleted', async () => {
    const file = await upload(s.tenants.a, { folder: 'foreign' });
    const deletion = await remove(file.id);
    for (const other of [s.tenants.b, s.tenants.aOther, s.tenants.aTest]) {
      const res = await restore(file.id, other.token);
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error.code, 'not_found');
      assert.deepEqual(await deletedIds('', other.token), [], 'nor is it in their list of deleted files');
    }
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 404);
    const [listed] = (await s.request('GET', '/media?deleted=true&folder=foreign')).body.files as Listed[];
    assert.equal(listed?.id, file.id);
    assert.equal(listed?.purges_at, deletion.purges_at, 'its window is untouched');
  });

  test('an unknown id is 404 not_found', async () => {
    const res = await restore(unknownId);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
    assert.equal(res.body.error.request_id, res.headers.get('x-request-id'));
  });

  test('scopes: without media:write 403 naming it (a Viewer’s token), nothing restored; media:read lists deleted files; no token 401', async () => {
    const file = await upload(s.tenants.a, { folder: 'scopes' });
    await remove(file.id);
    const viewer = await s.token(s.tenants.a, ['media:read', 'logs:read', 'members:read', 'usage:read']);
    const refused = await restore(file.id, viewer);
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'forbidden');
    assert.equal(refused.body.error.required_scope, 'media:write');
    assert.deepEqual(await deletedIds('&folder=scopes', viewer), [file.id], 'still deleted; a Viewer may see the list');
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 404);

    const writer = await s.token(s.tenants.a, ['media:write']);
    const list = await s.request('GET', '/media?deleted=true', { token: writer });
    assert.equal(list.status, 403);
    assert.equal(list.body.error.required_scope, 'media:read');
    assert.equal((await restore(file.id, writer)).status, 200, 'media:write alone restores');
    assert.equal((await restore(file.id, null)).status, 401);
  });

  test('the list of deleted files: newest deletion first, with deleted, deleted_at and purges_at; paged by cursor; folder and tag filters', async () => {
    const files: Array<{ id: string }> = [];
    for (let i = 0; i < 5; i++) {
      files.push(await upload(s.tenants.a, { folder: 'listing', tags: i % 2 ? ['odd'] : ['even'] }));
      s.clock.advance(1);
    }
    const kept = files[2]!;
    // Deleted in another order than uploaded: 3, 0, 4, 1.
    const deletedBetween = new Map<string, [number, number]>();
    for (const i of [3, 0, 4, 1]) {
      const before = s.server.ctx.clock.now();
      await remove(files[i]!.id);
      deletedBetween.set(files[i]!.id, [before, s.server.ctx.clock.now()]);
      s.clock.advance(1000);
    }
    const expected = [1, 4, 0, 3].map((i) => files[i]!.id);

    const first = await s.request('GET', '/media?deleted=true&folder=listing&limit=3');
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(ids(first), expected.slice(0, 3));
    assert.equal(first.body.has_more, true);
    for (const f of first.body.files as Listed[]) {
      assert.equal(f.deleted, true);
      const [from, to] = deletedBetween.get(f.id)!;
      assert.ok(Date.parse(f.deleted_at!) >= from && Date.parse(f.deleted_at!) <= to, `${f.deleted_at} is the time of the DELETE`);
      assert.equal(Date.parse(f.purges_at!) - Date.parse(f.deleted_at!), 30 * day);
      assert.equal(f.updated_at, f.deleted_at);
    }
    const second = await s.request('GET', `/media?deleted=true&folder=listing&limit=3&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    assert.deepEqual(ids(second), expected.slice(3));
    assert.equal(second.body.has_more, false);
    assert.equal(second.body.next_cursor, '');

    assert.deepEqual(await deletedIds('&folder=listing&tag=odd'), [files[1]!.id, files[3]!.id]);
    assert.deepEqual(await deletedIds('&folder=listing&tag=even'), [files[4]!.id, files[0]!.id]);
    assert.deepEqual(await activeIds('&folder=listing'), [kept.id], 'the active list is unchanged by the new filter');
    assert.deepEqual(await activeIds('&folder=listing&deleted=false'), [kept.id]);
    const active = (await s.request('GET', '/media?folder=listing')).body.files as Listed[];
    assert.ok(active.every((f) => !('deleted' in f) && !('purges_at' in f) && !('deleted_at' in f)), 'active files carry no deletion fields');

    // A restored file leaves the list; the rest keep their order.
    assert.equal((await restore(files[4]!.id)).status, 200);
    assert.deepEqual(await deletedIds('&folder=listing'), [1, 0, 3].map((i) => files[i]!.id));
  });

  test('deleted list cursors: bound to that list, its filters and the tenant; bad values are 400', async () => {
    const page = await s.request('GET', '/media?deleted=true&limit=1');
    assert.equal(page.body.has_more, true);
    const cursor = encodeURIComponent(page.body.next_cursor);
    assert.equal((await s.request('GET', `/media?deleted=true&limit=1&cursor=${cursor}`)).status, 200);
    assert.equal((await s.request('GET', `/media?limit=1&cursor=${cursor}`)).status, 400, 'not a cursor of the active list');
    assert.equal((await s.request('GET', `/media?deleted=true&folder=listing&limit=1&cursor=${cursor}`)).status, 400, 'nor of another filter');
    const active = await s.request('GET', '/media?limit=1');
    assert.equal((await s.request('GET', `/media?deleted=true&limit=1&cursor=${encodeURIComponent(active.body.next_cursor)}`)).status, 400);
    for (const other of [s.tenants.b, s.tenants.aOther, s.tenants.aTest]) {
      assert.equal((await s.request('GET', `/media?deleted=true&cursor=${cursor}`, { token: other.token })).status, 400);
    }
    assert.equal((await s.request('GET', '/media?deleted=maybe')).status, 400);
    assert.equal((await s.request('GET', '/media?deleted=true&limit=0')).status, 400);
    assert.equal((await s.request('GET', '/media?deleted=true&limit=101')).status, 400);
  });

  test("tenant isolation of the deleted list: each tenant sees only its own deleted files", async () => {
    const mine = await upload(s.tenants.aTest);
    await remove(mine.id, s.tenants.aTest);
    const theirs = await upload(s.tenants.b);
    await remove(theirs.id, s.tenants.b);
    assert.deepEqual(await deletedIds('', s.tenants.aTest.token), [mine.id]);
    assert.deepEqual(await deletedIds('', s.tenants.b.token), [theirs.id]);
    assert.deepEqual(await deletedIds('', s.tenants.aOther.token), []);
    const a = await deletedIds('&limit=100');
    assert.ok(!a.includes(mine.id) && !a.includes(theirs.id));
    assert.equal((await restore(mine.id)).status, 404, 'live token, test-mode file');
    assert.equal((await restore(mine.id, s.tenants.aTest.token)).status, 200);
  });

  // Last: moves the clock past every window above.
  test('past its window: left out of the deleted list and 404 before the purge runs, and after it', async () => {
    const file = await upload(s.tenants.a, { folder: 'window' });
    await remove(file.id);
    s.clock.advance(30 * day - 1000);
    assert.deepEqual(await deletedIds('&folder=window'), [file.id], 'still restorable on its last day');
    s.clock.advance(1000);
    assert.deepEqual(await deletedIds('&folder=window'), []);
    const late = await restore(file.id);
    assert.equal(late.status, 404, late.text);
    assert.equal(late.body.error.code, 'not_found');
    await s.server.media.purge();
    assert.equal((await restore(file.id)).status, 404, 'purged');
    assert.equal(await status(file.url), 404);
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 404);
  });
});
