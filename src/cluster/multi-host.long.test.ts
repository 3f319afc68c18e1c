import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { parseScopes } from '../tokens/token-service.js';
import { eventsNodeProcess, exited, freePort, serveProcess, opsctlArgs } from '../test-support/test-process.js';
import { spawnSync } from 'node:child_process';
import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { freshS3Url, clearS3Prefix, testBlobUrl } from '../test-support/stores/s3-testing.js';
import { S3BlobStore } from '../stores/blobs/s3-blob-store.js';
import { parseS3Url } from '../stores/blobs/s3-url.js';
import { missingServices, services, sharedDatabase } from '../test-support/cluster/test-services.js';
import { legs, needs } from '../test-support/ci.js';

/**
 * The issue's multi-host test: two API processes, each with its own ports and data directory
 * (as on two hosts), on shared backends only: PostgreSQL, S3 (Swift), Redis, NATS and an events
 * node. Runs in CI's S3 leg, where every backend is up.
 */
const onLeg = legs.s3();
const missing = testBlobUrl() ? await missingServices() : false;
const secret = 'multi-host-test-secret-key-0123456789abcdef';

async function installation() {
  const database = await sharedDatabase();
  const blobUrl = await freshS3Url(testBlobUrl()!);
  const dirs = [0, 1, 2].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'ops-host-')));
  const shared = { OPS_DATABASE_URL: database.url, OPS_SECRET_KEY: secret };
  const setup = await createContext(loadConfig({ ...shared, OPS_DATA_DIR: dirs[2]! }), systemClock);
  const org = await setup.orgs.createOrg({ name: 'Hosts', plan: 'enterprise', ownerEmail: 'hosts@example.com' });
  const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
  const created = () => setup.tokens.create({ tenant, name: 't', scopes: parseScopes('all'), expiresAt: null });
  const newToken = async () => (await created()).token;
  const victim = await created();
  const tokens = { main: await newToken(), limited: await newToken(), revoked: victim.token, revokedId: victim.id, load: await Promise.all([1, 2, 3, 4].map(newToken)) };
  await setup.close();

  const children: ChildProcess[] = [];
  const nodePort = await freePort();
  children.push(await eventsNodeProcess(dirs[2]!, nodePort, shared));
  const hosts = [];
  for (const dir of dirs.slice(0, 2)) {
    const port = await freePort();
    const cdnPort = await freePort();
    const child = await serveProcess(dir!, port, {
      ...shared,
      OPS_CDN_PORT: String(cdnPort),
      OPS_BLOB_URL: blobUrl,
      OPS_EVENTS_URL: `http://127.0.0.1:${nodePort}`,
      OPS_REDIS_URL: `redis://${services.redis.host}:${services.redis.port}/?keyPrefix=ops-mh-${process.pid}-${nodePort}:`,
      OPS_NATS_URL: `nats://${services.nats.host}:${services.nats.port}`,
      OPS_RATE_LIMIT_PER_SECOND: '20',
      OPS_RATE_LIMIT_BURST: '40',
      // Longer than any wait below: an event reaching the other host's live tail came by NATS.
      OPS_TAIL_POLL_MS: '60000',
      OPS_AUTH_CACHE_MS: '60000',
    });
    children.push(child);
    hosts.push({ port, cdnPort, child, api: `http://127.0.0.1:${port}/v1` });
  }
  return {
    a: hosts[0]!,
    b: hosts[1]!,
    tokens,
    blobUrl,
    /** `opsctl purge` as an operator runs it, on the shared stores, with no grace period for the sweep. */
    purge: () => {
      const url = new URL(blobUrl);
      url.searchParams.set('sweep_grace_s', '0');
      const run = spawnSync(process.execPath, opsctlArgs('purge', '--json'), {
        env: { ...process.env, ...shared, OPS_DATA_DIR: dirs[2]!, OPS_BLOB_URL: url.toString(), OPS_EVENTS_URL: `http://127.0.0.1:${nodePort}`, OPS_LOG_LEVEL: 'warn' },
        encoding: 'utf8',
      });
      assert.equal(run.status, 0, run.stderr);
      return JSON.parse(run.stdout) as object;
    },
    close: async () => {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(children.map(exited));
      await clearS3Prefix(blobUrl).catch(() => undefined);
      await database.drop();
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const call = async (url: string, token: string, init: { method?: string; json?: unknown; body?: BodyInit; type?: string } = {}) => {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (init.type) headers['content-type'] = init.type;
  const r = await fetch(url, { method: init.method ?? (init.json !== undefined || init.body ? 'POST' : 'GET'), headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  const text = await r.text();
  let body;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: r.status, body, text, headers: r.headers };
};

/** `call`, waiting out 429s (the hosts run with a limit of 20/s so the shared limit shows): for reading many pages. */
const patiently = async (...args: Parameters<typeof call>): ReturnType<typeof call> => {
  for (;;) {
    const r = await call(...args);
    if (r.status !== 429) return r;
    await new Promise((resolve) => setTimeout(resolve, Number(r.headers.get('retry-after') ?? 1) * 1000));
  }
};

const png = (seed: number) => {
  const bytes = Buffer.alloc(2048, seed);
  Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').copy(bytes);
  return bytes;
};
const upload = (api: string, token: string, bytes: Buffer, name = 'shot.png') => {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/png' }), name);
  return call(`${api}/media`, token, { body: form });
};

onLeg.test('two API hosts on shared backends: upload on A, deliver from B; ingest on B, tail on A; shared rate limit; cursors; revocation', { ...needs(missing), timeout: 180_000 }, async () => {
  const s = await installation();
  const controller = new AbortController();
  try {
    const { a, b, tokens } = s;
    // Upload on A, deliver from B (the object is in S3, the record in PostgreSQL).
    const bytes = png(1);
    const uploaded = await upload(a.api, tokens.main, bytes);
    assert.equal(uploaded.status, 201, uploaded.text);
    const deliveryPath = new URL(uploaded.body.url).pathname;
    const delivered = await fetch(`http://127.0.0.1:${b.cdnPort}${deliveryPath}`);
    assert.equal(delivered.status, 200);
    assert.deepEqual(Buffer.from(await delivered.arrayBuffer()), bytes);
    const ranged = await fetch(`http://127.0.0.1:${b.cdnPort}${deliveryPath}`, { headers: { range: 'bytes=0-7' } });
    assert.equal(ranged.status, 206);

    // A cursor from A works on B (one signing key): the media list, one per page.
    await upload(a.api, tokens.main, png(2), 'second.png');
    const page1 = await call(`${a.api}/media?limit=1`, tokens.main);
    assert.equal(page1.body.files.length, 1);
    const page2 = await call(`${b.api}/media?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`, tokens.main);
    assert.equal(page2.status, 200);
    assert.equal(page2.body.files.length, 1);
    assert.notEqual(page2.body.files[0].id, page1.body.files[0].id);

    // Ingest on B reaches a live tail on A: with the poll at 60 s, only NATS can carry the wake-up.
    assert.equal((await call(`${a.api}/datasets`, tokens.main, { json: { name: 'game' } })).status, 201);
    const tail = await fetch(`${a.api}/query/tail`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ q: 'event:boom' }),
      signal: controller.signal,
    });
    assert.equal(tail.status, 200);
    const reader = tail.body!.getReader();
    await new Promise((r) => setTimeout(r, 300)); // the session has read its start position
    const sent = Date.now();
    assert.equal((await call(`${b.api}/datasets/game/ingest`, tokens.main, { json: [{ event: 'boom', message: 'from B' }] })).status, 200);
    let text = '';
    while (!text.includes('from B') && Date.now() - sent < 20_000) {
      const { value, done } = await Promise.race([reader.read(), new Promise<{ value: undefined; done: true }>((r) => setTimeout(() => r({ value: undefined, done: true }), 20_000))]);
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    assert.match(text, /"message":"from B"/);
    // And an event query on B after the ingest on B, with a cursor used on A.
    for (let i = 0; i < 3; i++) await call(`${b.api}/datasets/game/ingest`, tokens.main, { json: Array.from({ length: 60 }, (_, j) => ({ event: 'page', message: `${i}-${j}` })) });
    const q1 = await call(`${b.api}/query`, tokens.main, { json: { q: 'event:page' } });
    assert.equal(q1.body.events.length, 100);
    const q2 = await call(`${a.api}/query`, tokens.main, { json: { q: 'event:page', cursor: q1.body.next_cursor } });
    assert.equal(q2.status, 200);
    assert.equal(q2.body.events.length, 80);

    // One token's limit holds across both hosts: 100 requests at once, 50 to each. Per process
    // (burst 40 each) 80 would pass; shared, at most the burst plus one more second's 20.
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => call(`${(i % 2 ? a : b).api}/usage`, tokens.limited)));
    const passed = results.filter((r) => r.status === 200).length;
    assert.ok(results.every((r) => r.status === 200 || r.status === 429));
    assert.ok(passed >= 20 && passed <= 60, `${passed} of 100 passed`);

    // Revoke on A, refused on B at the next request (B had the token cached for 60 s).
    assert.equal((await call(`${b.api}/usage`, tokens.revoked)).status, 200);
    assert.equal((await call(`${a.api}/tokens/${tokens.revokedId}`, tokens.main, { method: 'DELETE' })).status, 200);
    const refused = await call(`${b.api}/usage`, tokens.revoked);
    assert.equal(refused.status, 401);
  } finally {
    controller.abort();
    await s.close();
  }
});

/** Every object and unfinished multipart upload under the URL's prefix. */
async function storedUnder(url: string): Promise<{ objects: string[]; uploads: number }> {
  const options = parseS3Url(url);
  const store = new S3BlobStore(options);
  try {
    const objects: string[] = [];
    let token: string | undefined;
    do {
      const page = await store.client.send(new ListObjectsV2Command({ Bucket: options.bucket, Prefix: `${options.prefix}/`, ContinuationToken: token }));
      for (const o of page.Contents ?? []) objects.push(o.Key!);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const uploads = await store.client.send(new ListMultipartUploadsCommand({ Bucket: options.bucket, Prefix: `${options.prefix}/` }));
    return { objects, uploads: uploads.Uploads?.length ?? 0 };
  } finally {
    await store.close();
  }
}

onLeg.test('one API host killed during uploads and ingest: the other keeps serving, nothing acknowledged is lost, no orphan object after the sweep', { ...needs(missing), timeout: 240_000 }, async () => {
  const s = await installation();
  try {
    const { a, b, tokens } = s;
    assert.equal((await call(`${a.api}/datasets`, tokens.main, { json: { name: 'game' } })).status, 201);
    const uploaded: Array<{ url: string; bytes: Buffer }> = [];
    const ingested = new Set<string>();
    const bServed: number[] = [];
    let stop = false;
    // Each client has its own token (the limit is 20/s per token) and keeps going until stopped;
    // on A it ends when A is gone.
    const client = async (host: typeof a, token: string, n: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const bytes = Buffer.concat([png(n), Buffer.alloc(64 * 1024 * (1 + (i % 4)), i)]);
          const up = await upload(host.api, token, bytes, `f${n}-${i}.png`);
          if (host === b) bServed.push(up.status);
          if (up.status === 201) uploaded.push({ url: up.body.url, bytes });
          const ids = Array.from({ length: 50 }, () => crypto.randomUUID());
          const r = await call(`${host.api}/datasets/game/ingest`, token, { json: ids.map((id) => ({ event_id: id, event: 'load' })) });
          if (host === b) bServed.push(r.status);
          if (r.status === 200) for (const id of ids) ingested.add(id);
        } catch {
          if (host === a) return; // A was killed under this request: it was not acknowledged
          throw new Error('host B failed a request');
        }
      }
    };
    const clients = [client(a, tokens.load[0]!, 1), client(a, tokens.load[1]!, 2), client(b, tokens.load[2]!, 3), client(b, tokens.load[3]!, 4)];
    await new Promise((r) => setTimeout(r, 2_000));
    a.child.kill('SIGKILL');
    await exited(a.child);
    await new Promise((r) => setTimeout(r, 2_000));
    stop = true;
    await Promise.all(clients);
    assert.ok(bServed.length > 0 && bServed.every((status) => status === 200 || status === 201 || status === 429), `B answered ${[...new Set(bServed)].join(', ')}`);
    assert.ok(uploaded.length >= 4 && ingested.size >= 200, `${uploaded.length} uploads and ${ingested.size} events were acknowledged`);

    // Every acknowledged upload is delivered by B; every acknowledged event is stored once.
    for (const file of uploaded) {
      const r = await fetch(`http://127.0.0.1:${b.cdnPort}${new URL(file.url).pathname}`);
      assert.equal(r.status, 200);
      assert.deepEqual(Buffer.from(await r.arrayBuffer()), file.bytes);
    }
    const seen = new Map<string, number>();
    let cursor = '';
    do {
      const page = await patiently(`${b.api}/query`, tokens.main, { json: { q: 'event:load', ...(cursor ? { cursor } : {}) } });
      assert.equal(page.status, 200);
      for (const e of page.body.events) seen.set(e.event_id, (seen.get(e.event_id) ?? 0) + 1);
      cursor = page.body.next_cursor;
    } while (cursor);
    for (const id of ingested) assert.equal(seen.get(id), 1, `acknowledged event ${id} is stored once`);

    // The sweep leaves exactly the objects of committed files, and no unfinished multipart upload.
    s.purge();
    const stored = await storedUnder(s.blobUrl);
    let files = 0;
    let next = '';
    do {
      const page = await patiently(`${b.api}/media?limit=100${next ? `&cursor=${encodeURIComponent(next)}` : ''}`, tokens.main);
      files += page.body.files.length;
      next = page.body.has_more ? page.body.next_cursor : '';
    } while (next);
    assert.equal(stored.uploads, 0, 'unfinished multipart uploads remain');
    assert.equal(stored.objects.length, files, `${stored.objects.length} objects for ${files} files`);
    assert.ok(files >= uploaded.length);
  } finally {
    await s.close();
  }
});
