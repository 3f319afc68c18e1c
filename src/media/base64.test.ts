import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { gif, jpeg, png, sized } from '../test-support/media/test-files.js';

describe('POST /media/base64', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const post = (json: unknown) => s.request('POST', '/media/base64', { json });

  test('form A: filename, content_type, data', async () => {
    const res = await post({ filename: 'a.png', content_type: 'image/png', data: png().toString('base64'), folder: 'f', tags: ['x', 'y'] });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.content_type, 'image/png');
    assert.equal(res.body.size, png().length);
    assert.equal(res.body.folder, 'f');
    assert.deepEqual(res.body.tags, ['x', 'y']);
    assert.deepEqual(Buffer.from(await (await fetch(res.body.url)).arrayBuffer()), png());
  });

  test('form B: file and filename; the type comes from the bytes', async () => {
    const res = await post({ filename: 'b.jpg', file: jpeg().toString('base64') });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.content_type, 'image/jpeg');
  });

  test('data: URLs in form A and form B', async () => {
    const url = `data:image/gif;base64,${gif().toString('base64')}`;
    assert.equal((await post({ filename: 'c.gif', data: url })).body.content_type, 'image/gif');
    assert.equal((await post({ filename: 'd.gif', file: url })).body.content_type, 'image/gif');
  });

  test('form A content_type that does not match the bytes → 415', async () => {
    const res = await post({ filename: 'a.png', content_type: 'image/jpeg', data: png().toString('base64') });
    assert.equal(res.status, 415);
    assert.equal(res.body.error.detected, 'image/png');
  });

  test('form B bytes of no supported type → 415', async () => {
    assert.equal((await post({ filename: 'x', file: Buffer.from('hello').toString('base64') })).status, 415);
  });

  test('invalid base64 or missing fields → 400', async () => {
    for (const body of [
      { filename: 'a.png', content_type: 'image/png', data: 'not base64!' },
      { filename: 'a.png', content_type: 'image/png' },
      { content_type: 'image/png', data: png().toString('base64') },
      { filename: 'a.png', data: png().toString('base64') },
      { filename: 'a.png', data: 'x', file: 'y' },
    ]) {
      const res = await post(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.code, 'bad_request');
    }
  });

  test('decoded exactly 10 MB passes; 10 MB + 1 → 413 too_large with limit', async () => {
    const ok = await post({ filename: 'big.png', content_type: 'image/png', data: sized('image/png', 10_000_000).toString('base64') });
    assert.equal(ok.status, 201, ok.text.slice(0, 200));
    const over = await post({ filename: 'big.png', content_type: 'image/png', data: sized('image/png', 10_000_001).toString('base64') });
    assert.equal(over.status, 413);
    assert.equal(over.body.error.code, 'too_large');
    assert.equal(over.body.error.limit, 10_000_000);
  });

  test('a raw body over 14 MB → 413 too_large naming 14 MB', async () => {
    const res = await post({ filename: 'x.png', content_type: 'image/png', data: 'A'.repeat(14_000_100) });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 'too_large');
    assert.equal(res.body.error.limit, 14_000_000);
  });
});
