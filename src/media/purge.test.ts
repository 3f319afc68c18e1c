import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { extraCommands } from '../cli/commands.js';
import { png } from '../test-support/media/test-files.js';
import { blobFiles } from '../test-support/media/test-helpers.js';

const day = 86_400_000;

/** Status of a delivery GET, body read so the connection is free again. */
const status = async (url: string) => {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.status;
};

describe('soft delete window, purge and restore', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const purge = () => s.server.media.purge();
  const restore = extraCommands.find((c) => c.name === 'media restore')!;
  // The context of an opsctl run in this process, given the server's delivery address as OPS_CDN_URL.
  const opsctl = () => ({ ...s.server.ctx, config: { ...s.server.ctx.config, cdnUrl: s.cdnUrl } });
  const used = async () => (await s.server.ctx.quotas.usage(s.tenants.a.orgId, 'pro')).find((q) => q.metric === 'storage_bytes')!.used;
  const upload = async () => {
    const res = await s.request('POST', '/media/base64', { json: { filename: 'p.png', content_type: 'image/png', data: png().toString('base64') } });
    assert.equal(res.status, 201);
    return res.body as { id: string; url: string; size: number };
  };

  test('a soft-deleted file is served during the window and 404 once purged; its bytes leave the quota', async () => {
    const file = await upload();
    const kept = await upload();
    const before = await used();
    assert.equal((await s.request('DELETE', `/media/${file.id}`)).status, 200);
    s.clock.advance(29 * day);
    assert.deepEqual(await purge(), { purged: 0, bytes: 0, reclaimed: 0 });
    assert.equal((await status(file.url)), 200, 'still served on day 29');
    assert.equal(await used(), before, 'soft-deleted files still count');
    s.clock.advance(2 * day);
    // Two purges at once (as from two processes): the file is purged once, the quota released once.
    const [one, two] = await Promise.all([purge(), purge()]);
    assert.equal(one.purged + two.purged, 1);
    assert.equal((await status(file.url)), 404);
    assert.equal((await status(kept.url)), 200);
    assert.equal(await used(), before - file.size);
    assert.equal((await blobFiles(s)).blobs.length, 1);
    assert.equal((await restore.run(opsctl(), { id: file.id }, { err: () => {} }).catch((e: { code: string }) => e.code)), 'not_found');
  });

  test('opsctl media restore brings a soft-deleted file back inside the window', async () => {
    const file = await upload();
    await s.request('DELETE', `/media/${file.id}`);
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 404);
    const restored = (await restore.run(opsctl(), { id: file.id }, { err: () => {} })) as { id: string; url: string };
    assert.deepEqual([restored.id, restored.url], [file.id, file.url]);
    assert.equal((await s.request('GET', `/media/${file.id}`)).status, 200);
    s.clock.advance(31 * day);
    await purge();
    assert.equal((await status(file.url)), 200, 'a restored file is not purged');
    await assert.rejects(restore.run(opsctl(), { id: file.id }, { err: () => {} }), { code: 'not_found' });
    await assert.rejects(restore.run(opsctl(), { id: 'nope' }, { err: () => {} }), { code: 'bad_request' });
  });

  test("the blob store's sweep keeps what a record (soft-deleted too) or an upload in flight knows, and only that", async () => {
    const active = (await upload()) as { id: string; key?: string };
    const deleted = (await upload()) as { id: string; key?: string };
    await s.request('DELETE', `/media/${deleted.id}`);
    const media = s.server.media.service;
    const reservation = await media.reservations.reserve(s.tenants.a.orgId, 'pro', 'inflight1/f.png', 10);
    try {
      const known = await media.knownKeys([active.key!, deleted.key!, 'inflight1/f.png', 'orphan1/o.png']);
      assert.deepEqual([...known].sort(), [active.key!, deleted.key!, 'inflight1/f.png'].sort());
    } finally {
      await media.reservations.release(reservation);
    }
  });
});
