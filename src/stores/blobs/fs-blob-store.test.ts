import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FsBlobStore } from './fs-blob-store.js';
import { isValidKey } from './blob-store.js';

const fresh = () => {
  const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ops-blobs-')), 'blobs');
  return { root, store: new FsBlobStore(root) };
};
const read = async (r: Readable | undefined) => {
  const chunks: Buffer[] = [];
  for await (const c of r!) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

describe('file-system blob store', () => {
  test('put, stat, exists, get (whole and a range), delete (twice)', async () => {
    const { store } = fresh();
    assert.deepEqual(await store.put('abc123/x.bin', Readable.from([Buffer.from('hello '), Buffer.from('world')])), { size: 11 });
    assert.deepEqual(await store.stat('abc123/x.bin'), { size: 11 });
    assert.equal(await store.exists('abc123/x.bin'), true);
    assert.equal((await read(await store.get('abc123/x.bin'))).toString(), 'hello world');
    assert.equal((await read(await store.get('abc123/x.bin', { start: 6, end: 10 }))).toString(), 'world');
    await store.delete('abc123/x.bin');
    await store.delete('abc123/x.bin');
    assert.equal(await store.get('abc123/x.bin'), undefined);
    assert.equal(await store.exists('abc123/x.bin'), false);
  });

  test('a body that fails half-way leaves no blob and no temp file', async () => {
    const { root, store } = fresh();
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(1000));
        this.destroy(new Error('client went away'));
      },
    });
    await assert.rejects(store.put('abc/y.bin', failing), /client went away/);
    assert.equal(await store.exists('abc/y.bin'), false);
    assert.deepEqual(fs.readdirSync(path.join(root, '.tmp')), []);
  });

  test('keys that could leave the root are refused', async () => {
    for (const key of ['../x', 'a/../../x', '/etc/passwd', 'a//b', '.', 'a/..', '', 'a\\b', '.tmp/x']) assert.equal(isValidKey(key), false, key);
    const { store } = fresh();
    await assert.rejects(store.put('../evil', Readable.from([Buffer.from('x')])));
  });

  test('the sweeper removes temp files of dead writers and old ones, not live ones', async () => {
    const { root, store } = fresh();
    const tmp = path.join(root, '.tmp');
    const host = os.hostname().replace(/[^A-Za-z0-9]/g, '_');
    fs.writeFileSync(path.join(tmp, `${host}-999999999-dead`), 'partial');
    fs.writeFileSync(path.join(tmp, `${host}-${process.pid}-live`), 'partial');
    const old = path.join(tmp, `otherhost-1-old`);
    fs.writeFileSync(old, 'partial');
    fs.utimesSync(old, new Date(Date.now() - 2 * 86_400_000), new Date(Date.now() - 2 * 86_400_000));
    fs.writeFileSync(path.join(tmp, `otherhost-1-recent`), 'partial');
    assert.equal(await store.sweep(async () => new Set()), 2);
    assert.deepEqual(fs.readdirSync(tmp).sort(), ['otherhost-1-recent', `${host}-${process.pid}-live`].sort());
  });

  test('the sweeper removes blobs no record knows once past the grace period, keeping known and recent ones', async () => {
    const { root, store } = fresh();
    for (const key of ['kept1/k.bin', 'orphan1/o.bin', 'recent1/r.bin']) await store.put(key, Readable.from([Buffer.from(key)]));
    const old = new Date(Date.now() - 2 * 86_400_000);
    for (const key of ['kept1/k.bin', 'orphan1/o.bin']) fs.utimesSync(path.join(root, key.slice(0, 2), key), old, old);
    const asked: string[] = [];
    const known = async (keys: string[]) => {
      asked.push(...keys);
      return new Set(keys.filter((k) => k.startsWith('kept')));
    };
    assert.equal(await store.sweep(known), 1);
    assert.deepEqual(asked.sort(), ['kept1/k.bin', 'orphan1/o.bin']);
    assert.deepEqual((await store.inventory()).blobs.sort(), ['kept1/k.bin', 'recent1/r.bin']);
  });
});
