import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { parseScopes } from '../tokens/token-service.js';
import { openMedia } from './capability.js';
import { createLogger } from '../kernel/logger.js';
import { PublicUrls } from '../kernel/public-urls.js';
import { newStorageKey } from './names.js';
import { reservationMaxAgeMs } from './reservations.js';
import { Readable } from 'node:stream';
import { freePort, serveProcess as serve } from '../test-support/test-process.js';

const storageUsed = async (port: number, token: string) => {
  const response = await fetch(`http://127.0.0.1:${port}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  assert.equal(response.status, 200, `GET /v1/usage: ${text}`);
  const usage = JSON.parse(text) as { quotas: Array<{ metric: string; used: number }> };
  return usage.quotas.find((q) => q.metric === 'storage_bytes')!.used;
};

/** Every file under the blob root, temp files included. */
const blobFiles = (dataDir: string): string[] =>
  fs.existsSync(path.join(dataDir, 'blobs')) ? fs.readdirSync(path.join(dataDir, 'blobs'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name) : [];

test('SIGKILL in the middle of an upload: after restart the quota is given back and no blob or temp file remains', { timeout: 120_000 }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-media-crash-'));
  const setup = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
  const org = await setup.orgs.createOrg({ name: 'Crash', plan: 'pro', ownerEmail: 'crash@example.com' });
  const { token } = await setup.tokens.create({ tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' }, name: 't', scopes: parseScopes('all'), expiresAt: null });
  await setup.close();

  const port = await freePort();
  const child = await serve(dataDir, port);
  // A 4 MB PNG announced by Content-Length, of which only the first half is ever sent.
  const boundary = 'crashboundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);
  const png = Buffer.alloc(4 * 1024 * 1024, 7);
  Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').copy(png);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const request = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/media',
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + png.length + tail.length },
  });
  request.on('error', () => {});
  let during = 0;
  try {
    request.write(head);
    request.write(png.subarray(0, png.length / 2));
    // Wait until the server holds the reservation and has written part of the blob (both: on a
    // loaded machine the reservation showed before the temp file did).
    for (let i = 0; i < 200 && (during === 0 || blobFiles(dataDir).length === 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      during = await storageUsed(port, token);
    }
  } finally {
    // Also when a check above failed: a server left running would hold the test run open.
    child.kill('SIGKILL');
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
    request.destroy();
  }
  assert.ok(during > 0, 'the upload reserved quota');
  assert.ok(blobFiles(dataDir).length > 0, 'the crash left a temp file behind');

  const restarted = await serve(dataDir, port);
  try {
    // Start-up sweeps temp files of dead writers and reclaims their reservations.
    let used = -1;
    for (let i = 0; i < 50 && used !== 0; i++) {
      used = await storageUsed(port, token);
      if (used !== 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(used, 0);
    assert.deepEqual(blobFiles(dataDir), []);
  } finally {
    restarted.kill('SIGTERM');
    await new Promise((r) => restarted.once('exit', r));
  }
});

test('a reservation whose holder may still run elsewhere is reclaimed only after a day, with its blob', async () => {
  let now = Date.parse('2026-03-01T00:00:00.000Z');
  const clock = { now: () => now };
  const ctx = await createContext(loadConfig({ OPS_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'ops-reservations-')) }), clock);
  try {
    const org = await ctx.orgs.createOrg({ name: 'R', plan: 'pro', ownerEmail: 'r@example.com' });
    const media = openMedia({ ctx, log: createLogger(false), urls: new PublicUrls(ctx.config) }).service;
    const key = newStorageKey('a.png');
    // A reservation of this (live) process, as if another host held it: only age reclaims it.
    const reservation = await media.reservations.reserve(org.org_id, 'pro', key, 1000);
    await media.blobs.put(key, Readable.from([Buffer.alloc(1000)]));
    const used = async () => (await ctx.quotas.usage(org.org_id, 'pro')).find((q) => q.metric === 'storage_bytes')!.used;
    assert.equal(await used(), 1000);

    now += reservationMaxAgeMs - 1000;
    assert.equal((await media.purge()).reclaimed, 0);
    assert.equal(await used(), 1000);
    assert.equal(await media.blobs.exists(key), true);

    now += 2000;
    const [first, second] = await Promise.all([media.purge(), media.purge()]);
    assert.equal(first.reclaimed + second.reclaimed, 1, 'exactly one purge reclaims it');
    assert.equal(await used(), 0);
    assert.equal(await media.blobs.exists(key), false);

    // The holder comes back after all: it cannot settle or commit, and gives nothing back twice.
    assert.equal(await media.reservations.settle(reservation, 1000), false);
    await media.reservations.release(reservation);
    assert.equal(await used(), 0);
  } finally {
    await ctx.close();
  }
});
