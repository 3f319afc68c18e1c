import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { multipart, samples, sized, png, pdf, gif, type Part } from '../test-support/media/test-files.js';
import { supportedTypes } from './sniff.js';
import { blobFiles, send } from '../test-support/media/test-helpers.js';

describe('POST /media', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const upload = (parts: Part[], token?: string) => {
    const m = multipart(parts);
    return s.request('POST', '/media', { body: new Uint8Array(m.body), headers: { 'content-type': m.contentType }, token });
  };

  for (const type of supportedTypes) {
    test(`a real ${type} file is accepted with 201 and the merged File shape`, async () => {
      const bytes = samples[type]();
      const res = await upload([{ name: 'file', value: bytes, filename: `sample.${type.split('/')[1]}`, type }]);
      assert.equal(res.status, 201, res.text);
      const f = res.body;
      assert.match(f.id, /^f_[0-9A-Z]{26}$/);
      assert.equal(f.content_type, type);
      assert.equal(f.size, bytes.length);
      assert.equal(f.sha256, crypto.createHash('sha256').update(bytes).digest('hex'));
      assert.equal(f.original_name, f.filename);
      assert.equal(f.org_id, s.tenants.a.orgId);
      assert.equal(f.abuse_status, 'clean');
      assert.equal(f.visibility, 'public');
      assert.equal(f.storage_class, 'standard');
      assert.equal(f.url, `${s.cdnUrl}/${f.key}`);
      assert.match(f.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(Object.keys(f).sort(), 'abuse_status content_type created_at filename folder id key org_id original_name sha256 size storage_class tags updated_at url visibility'.split(' ').sort());
    });
  }

  for (const declared of supportedTypes) {
    for (const real of supportedTypes) {
      if (declared === real) continue;
      test(`${real} bytes declared as ${declared} → 415 with declared and detected`, async () => {
        const res = await upload([{ name: 'file', value: samples[real](), filename: 'x', type: declared }]);
        assert.equal(res.status, 415, res.text);
        assert.equal(res.body.error.code, 'unsupported_type');
        assert.equal(res.body.error.declared, declared);
        assert.equal(res.body.error.detected, real);
      });
    }
  }

  test('an unsupported declared type (image/svg+xml, text/plain) → 415', async () => {
    for (const type of ['image/svg+xml', 'text/plain', 'application/octet-stream']) {
      const res = await upload([{ name: 'file', value: '<svg/>', filename: 'x.svg', type }]);
      assert.equal(res.status, 415, res.text);
      assert.equal(res.body.error.code, 'unsupported_type');
    }
  });

  test('bytes of no supported type declared as image/png → 415 detected application/octet-stream', async () => {
    const res = await upload([{ name: 'file', value: 'just text', filename: 'x.png', type: 'image/png' }]);
    assert.equal(res.status, 415);
    assert.equal(res.body.error.detected, 'application/octet-stream');
  });

  test('a file part without Content-Type → 400 bad_request', async () => {
    const res = await upload([{ name: 'file', value: png(), filename: 'x.png' }]);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'bad_request');
  });

  test('no part named file → 400; a JSON body → 415', async () => {
    const res = await upload([{ name: 'other', value: png(), filename: 'x.png', type: 'image/png' }]);
    assert.equal(res.status, 400);
    assert.equal((await upload([{ name: 'folder', value: 'x' }])).status, 400);
    const json = await s.request('POST', '/media', { json: { file: 'x' } });
    assert.equal(json.status, 415);
  });

  test('folder and tags (repeated and comma list, before or after the file) are stored', async () => {
    const res = await upload([
      { name: 'tags', value: 'a, b' },
      { name: 'file', value: gif(), filename: 'an odd név.gif', type: 'image/gif' },
      { name: 'folder', value: 'screens' },
      { name: 'tags', value: 'c' },
    ]);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.tags, ['a', 'b', 'c']);
    assert.equal(res.body.folder, 'screens');
    assert.equal(res.body.original_name, 'an odd név.gif');
    assert.match(res.body.key, /^[0-9a-f]{32}\/an-odd-nev\.gif$/);
    assert.ok(!res.body.key.includes(s.tenants.a.orgId) && !res.body.key.includes(res.body.id.slice(2)));
  });

  test('an invalid tag → 400 and nothing stored', async () => {
    const before = (await s.server.ctx.quotas.usage(s.tenants.a.orgId, 'pro'))[0]!.used;
    const res = await upload([{ name: 'file', value: gif(), filename: 'x.gif', type: 'image/gif' }, { name: 'tags', value: 'bad"tag' }]);
    assert.equal(res.status, 400);
    assert.equal((await s.server.ctx.quotas.usage(s.tenants.a.orgId, 'pro'))[0]!.used, before);
  });

  test('identical bytes uploaded twice are two records', async () => {
    const a = await upload([{ name: 'file', value: pdf(), filename: 'a.pdf', type: 'application/pdf' }]);
    const b = await upload([{ name: 'file', value: pdf(), filename: 'a.pdf', type: 'application/pdf' }]);
    assert.notEqual(a.body.id, b.body.id);
    assert.notEqual(a.body.key, b.body.key);
    assert.equal(a.body.sha256, b.body.sha256);
  });

  test('scopes: media:read cannot upload (403), no token 401', async () => {
    const reader = await s.token(s.tenants.a, ['media:read']);
    assert.equal((await upload([{ name: 'file', value: gif(), filename: 'x', type: 'image/gif' }], reader)).status, 403);
    const anon = await s.request('POST', '/media', { token: null, body: 'x', headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    assert.equal(anon.status, 401);
  });

  test('a real curl -F upload', async () => {
    const file = path.join(s.dataDir, 'shot.png');
    fs.writeFileSync(file, png());
    // Not execFileSync: the server runs in this process, and blocking its event loop deadlocks.
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { stdout: out } = await promisify(execFile)('curl', ['-sS', '-H', `Authorization: Bearer ${s.tenants.a.token}`, '-F', `file=@${file};type=image/png`, '-F', 'folder=curl', `${s.baseUrl}/media`], { timeout: 30_000 });
    const body = JSON.parse(out.toString());
    assert.equal(body.content_type, 'image/png');
    assert.equal(body.original_name, 'shot.png');
    assert.equal(body.folder, 'curl');
    const delivered = Buffer.from(await (await fetch(body.url)).arrayBuffer());
    assert.deepEqual(delivered, png());
  });

  test('a type limit: a 50 MB image passes, 50 MB + 1 is 413 file_too_large (pro plan allows 250 MB)', async () => {
    const exact = multipart([{ name: 'file', value: sized('image/png', 50_000_000), filename: 'big.png', type: 'image/png' }]);
    const ok = await s.request('POST', '/media', { body: new Uint8Array(exact.body), headers: { 'content-type': exact.contentType } });
    assert.equal(ok.status, 201, ok.text.slice(0, 300));
    assert.equal(ok.body.size, 50_000_000);
    const over = multipart([{ name: 'file', value: sized('image/png', 50_000_001), filename: 'big.png', type: 'image/png' }]);
    const res = await send(s, over, { token: s.tenants.a.token });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 'file_too_large');
    assert.equal(res.body.error.limit, 50_000_000);
    assert.deepEqual((await blobFiles(s)).temp, []);
  });
});
