import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { multipart, sized } from '../test-support/media/test-files.js';
import { blobFiles, eventually, send } from '../test-support/media/test-helpers.js';

const plansFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ops-plans-')), 'plans.json');
fs.writeFileSync(
  plansFile,
  JSON.stringify({
    plans: { tiny: { max_file_bytes: 100_000, storage_bytes: 300_000, datasets: 1, retention_days: 1, live_tail: false, events_month: 1, queries_month: 1 } },
  }),
);

describe('upload limits and quota (plan tiny: 100 kB files, 300 kB storage)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ plan: 'tiny', env: { OPS_PLANS_FILE: plansFile } });
  });
  after(() => s.close());

  const used = async () => (await s.server.ctx.quotas.usage(s.tenants.a.orgId, 'tiny')).find((q) => q.metric === 'storage_bytes')!.used;
  const pdfPart = (size: number) => multipart([{ name: 'file', value: sized('application/pdf', size), filename: 'doc.pdf', type: 'application/pdf' }]);

  test('exactly the plan limit passes; limit + 1 is 413 file_too_large with limit, nothing kept', async () => {
    const ok = await send(s, pdfPart(100_000), { token: s.tenants.a.token });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.size, 100_000);
    assert.equal(await used(), 100_000);
    const over = await send(s, pdfPart(100_001), { token: s.tenants.a.token });
    assert.equal(over.status, 413);
    assert.equal(over.body.error.code, 'file_too_large');
    assert.equal(over.body.error.limit, 100_000);
    assert.equal(await used(), 100_000);
    assert.deepEqual((await blobFiles(s)).temp, []);
    assert.equal((await blobFiles(s)).blobs.length, 1);
  });

  test('an oversize upload is answered before the client has sent the whole body', async () => {
    // 300× the limit: loopback socket buffers absorb a few MB before the 413 reaches the
    // client, so "before the whole body" is what can be asserted without timing luck.
    const big = pdfPart(30_000_000);
    const res = await send(s, big, { token: s.tenants.a.token });
    assert.equal(res.status, 413);
    assert.ok(res.sentWhenAnswered < big.body.length, `answered after ${res.sentWhenAnswered} of ${big.body.length} bytes`);
    await eventually(async () => assert.deepEqual((await blobFiles(s)).temp, []));
    assert.equal(await used(), 100_000);
  });

  test('a client that disconnects half-way leaves no record, no blob and the quota unchanged', async () => {
    const before = (await blobFiles(s)).blobs.length;
    const listed = (await s.request('GET', '/media')).body.files.length;
    const m = pdfPart(90_000);
    // The server has read some of the file when the connection drops.
    const res = await send(s, m, { token: s.tenants.a.token, abortAt: 45_000 });
    assert.equal(res.status, 0);
    await eventually(async () => {
      assert.deepEqual((await blobFiles(s)).temp, []);
      assert.equal(await used(), 100_000);
    });
    assert.equal((await blobFiles(s)).blobs.length, before);
    assert.equal((await s.request('GET', '/media')).body.files.length, listed);
  });

  test('two uploads racing for the last bytes of quota: exactly one succeeds, the other 402', async () => {
    // 100 kB used of 300 kB: room for one more 90 kB file, not two... after this one, 190 kB used.
    const first = await send(s, pdfPart(90_000), { token: s.tenants.a.token });
    assert.equal(first.status, 201);
    const results = await Promise.all([send(s, pdfPart(90_000), { token: s.tenants.a.token }), send(s, pdfPart(90_000), { token: s.tenants.aOther.token })]);
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 402]);
    const refused = results.find((r) => r.status === 402)!;
    assert.equal(refused.body.error.code, 'quota_exceeded');
    assert.equal(refused.body.error.metric, 'storage_bytes');
    assert.ok(refused.body.error.quotas.some((q: { metric: string; limit: number }) => q.metric === 'storage_bytes' && q.limit === 300_000));
    assert.equal(await used(), 280_000);
    assert.deepEqual((await blobFiles(s)).temp, []);
  });
});
