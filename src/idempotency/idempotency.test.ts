import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestResponse, type TestServer } from '../test-support/test-server.js';
import { matchAll } from '../engine/event-store.js';
import { keyedRoutes, keyedSettingsRoutes, settingsTables, type KeyedRoute } from '../test-support/idempotency/test-routes.js';
import { IdempotencyStore, keepMs } from './idempotency-store.js';

const dataset = 'idem';

describe('Idempotency-Key on the keyed endpoints', () => {
  let s: TestServer;
  let blobRoot: string;
  before(async () => {
    // The file store, explicitly (also on the S3 leg): the 5xx test takes it away for a moment.
    blobRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-idem-blobs-'));
    // Private addresses for the keyed channel's URL: a loopback port nothing listens on (never sent to).
    s = await startTestServer({ env: { OPS_BLOB_URL: `file://${blobRoot}`, OPS_OUTBOUND_ALLOW_PRIVATE: 'true' } });
  });
  after(async () => {
    await s.close();
    fs.rmSync(blobRoot, { recursive: true, force: true });
  });

  let counter = 0;
  const unique = (label: string) => `${label}-${process.pid}-${counter++}`;

  const send = (route: KeyedRoute, variant: string, key: string | undefined, token = s.tenants.a.token): Promise<TestResponse> => {
    const { body, contentType } = route.body(variant);
    return s.request(route.method, route.path, { token, body, headers: { 'content-type': contentType, ...(key === undefined ? {} : { 'idempotency-key': key }) } });
  };

  /** How many times the effect of `variant` exists (rows, files, events). */
  const effects = async (route: KeyedRoute, variant: string): Promise<number> => {
    const db = s.server.ctx.metadata.db;
    const n = (row: { n: number | string | bigint } | undefined) => Number(row?.n ?? 0);
    const tokens = (name: string) => db.selectFrom('api_tokens').select((eb) => eb.fn.countAll<number>().as('n')).where('name', '=', name).executeTakeFirst();
    const datasets = (name: string) => db.selectFrom('datasets').select((eb) => eb.fn.countAll<number>().as('n')).where('name', '=', name).executeTakeFirst();
    const files = (name: string) => db.selectFrom('files').select((eb) => eb.fn.countAll<number>().as('n')).where('original_name', '=', name).executeTakeFirst();
    if (route.path === '/tokens') return n(await tokens(`token-${variant}`));
    if (route.path === '/datasets') return n(await datasets(JSON.parse(Buffer.from(route.body(variant).body).toString()).name as string));
    if (route.path === '/media/base64') return n(await files(`b64-${variant}.png`));
    if (route.path === '/media') return n(await files(`mp-${variant}.png`));
    const settings = settingsTables[route.path];
    if (settings) {
      const name = JSON.parse(Buffer.from(route.body(variant).body).toString()).name as string;
      return n(await db.selectFrom(settings).select((eb) => eb.fn.countAll<number>().as('n')).where('name', '=', name).executeTakeFirst());
    }
    let events = 0;
    let after;
    for (;;) {
      const page = await s.server.events.store.query(s.tenants.a, { filter: matchAll, limit: 1000, after });
      events += page.events.filter((e) => e.message.startsWith(`${variant}-`)).length;
      if (!page.next) return events / 2; // two good events per request
      after = page.next;
    }
  };

  for (const route of [...keyedRoutes(dataset), ...keyedSettingsRoutes()]) {
    describe(route.name, () => {
      test('a retry with the same key and body gets the first answer again (status, body, Idempotent-Replayed) and changes nothing', async () => {
        const v = unique('replay');
        const key = unique('key');
        const first = await send(route, v, key);
        assert.equal(first.status, route.status, first.text);
        assert.equal(first.headers.get('idempotent-replayed'), null);
        assert.equal(await effects(route, v), 1);
        for (let i = 0; i < 2; i++) {
          const again = await send(route, v, key);
          assert.equal(again.status, first.status);
          assert.equal(again.text, first.text, 'the very bytes of the first answer');
          assert.equal(again.headers.get('idempotent-replayed'), 'true');
          assert.match(again.headers.get('content-type') ?? '', /^application\/json/);
        }
        assert.equal(await effects(route, v), 1, 'the retries created nothing');
      });

      test('the same key with a different body → 409 conflict naming the key; nothing is created', async () => {
        const key = unique('key');
        const v = unique('first');
        assert.equal((await send(route, v, key)).status, route.status);
        const other = unique('other');
        const refused = await send(route, other, key);
        assert.equal(refused.status, 409, refused.text);
        assert.equal(refused.body.error.code, 'conflict');
        assert.match(refused.body.error.message, /already used .* with a different request body; send the same body to get the first answer again, or use a new key/);
        assert.equal(await effects(route, other), 0);
      });

      test('10 concurrent identical requests: exactly one effect; the others replay it or answer 409 with Retry-After', async () => {
        const v = unique('burst');
        const key = unique('key');
        const answers = await Promise.all(Array.from({ length: 10 }, () => send(route, v, key)));
        const ok = answers.filter((a) => a.status === route.status);
        const busy = answers.filter((a) => a.status === 409);
        assert.equal(ok.length + busy.length, 10, answers.map((a) => `${a.status} ${a.text}`).join('\n'));
        assert.ok(ok.length >= 1);
        assert.equal(ok.filter((a) => a.headers.get('idempotent-replayed') === null).length, 1, 'one answer is the request that ran');
        for (const a of ok) assert.equal(a.text, ok[0]!.text);
        for (const a of busy) {
          assert.equal(a.headers.get('retry-after'), '1');
          assert.match(a.body.error.message, /still being processed; retry in a moment/);
        }
        assert.equal(await effects(route, v), 1);
        const later = await send(route, v, key);
        assert.equal(later.text, ok[0]!.text);
      });

      test('the same key from another token is another key', async () => {
        const key = unique('key');
        const v = unique('mine');
        const other = await s.token(s.tenants.a, 'all');
        const first = await send(route, v, key);
        assert.equal(first.status, route.status, first.text);
        // Same key, another token of the same project: runs on its own (a dataset or saved search name is taken now: 409 from the endpoint itself).
        const theirs = await send(route, v, key, other);
        assert.equal(theirs.headers.get('idempotent-replayed'), null);
        if (route.uniqueName) {
          // Names are unique in a project.
          assert.equal(theirs.status, 409);
          assert.match(theirs.body.error.message, /already exists/);
        } else {
          assert.equal(theirs.status, route.status, theirs.text);
          if (route.path !== `/datasets/${dataset}/ingest`) assert.notDeepEqual(route.identity(theirs.body), route.identity(first.body));
          assert.equal(await effects(route, v), 2);
        }
        // A different body under that token and key is judged against that token's first use only.
        assert.equal((await send(route, unique('x'), key, other)).status, 409);
        assert.equal((await send(route, v, key)).headers.get('idempotent-replayed'), 'true');
      });

      test('a key that is not 1 to 255 printable ASCII characters → 400, and nothing runs', async () => {
        const v = unique('badkey');
        for (const key of ['k'.repeat(256), 'caf\u00e9', 'tab\there']) {
          const refused = await send(route, v, key);
          assert.equal(refused.status, 400, `${JSON.stringify(key)}: ${refused.text}`);
          assert.equal(refused.body.error.code, 'bad_request');
          assert.match(refused.body.error.message, /Idempotency-Key.*1 to 255 printable ASCII characters/);
        }
        assert.equal(await effects(route, v), 0);
        // 255 characters, spaces and punctuation are a key.
        assert.equal((await send(route, v, `${'~ '.repeat(127)}!`)).status, route.status);
      });

      test('24 hours later the key is forgotten: the same request runs again', async () => {
        const v = unique('expiry');
        const key = unique('key');
        const first = await send(route, v, key);
        assert.equal(first.status, route.status);
        s.clock.advance(keepMs - 60_000);
        assert.equal((await send(route, v, key)).headers.get('idempotent-replayed'), 'true', 'still remembered just before');
        s.clock.advance(61_000);
        const again = await send(route, v, key);
        assert.equal(again.headers.get('idempotent-replayed'), null);
        if (route.uniqueName) {
          assert.equal(again.status, 409, 'ran again: the name is taken by the first');
        } else {
          assert.equal(again.status, route.status, again.text);
          assert.equal(await effects(route, v), 2);
        }
        // The purge removes rows past their 24 hours; this key was just claimed afresh and stays.
        assert.ok((await new IdempotencyStore(s.server.ctx.metadata.db, s.clock).purge()) >= 1);
        assert.equal((await send(route, v, key)).text, again.text);
      });
    });
  }

  test('4xx answers are remembered: the same key and body get the same refusal, even once the cause is gone', async () => {
    const key = unique('key');
    const name = unique('fourxx').toLowerCase();
    const body = { name };
    const other = await s.token(s.tenants.a, 'all');
    // Taken by another token first: 409 from the endpoint, remembered under this key.
    assert.equal((await s.request('POST', '/datasets', { token: other, json: body })).status, 201);
    const refused = await s.request('POST', '/datasets', { json: body, headers: { 'idempotency-key': key } });
    assert.equal(refused.status, 409);
    assert.equal((await s.request('DELETE', `/datasets/${name}`, { token: other })).status, 200);
    const again = await s.request('POST', '/datasets', { json: body, headers: { 'idempotency-key': key } });
    assert.equal(again.status, 409);
    assert.equal(again.text, refused.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  test('validation errors (400 before the endpoint runs) are not remembered: the key stays free', async () => {
    const key = unique('key');
    const bad = await s.request('POST', '/tokens', { json: { name: 'x', scopes: ['media:read'], nonsense: 1 }, headers: { 'idempotency-key': key } });
    assert.equal(bad.status, 400);
    const good = await s.request('POST', '/tokens', { json: { name: 'x', scopes: ['media:read'] }, headers: { 'idempotency-key': key } });
    assert.equal(good.status, 201, good.text);
  });

  test('a body over the endpoint limit → 413 before the endpoint runs; the key stays free', async () => {
    const key = unique('key');
    const huge = await s.request('POST', '/media/base64', { json: { filename: 'h.png', content_type: 'image/png', data: 'A'.repeat(15_000_000) }, headers: { 'idempotency-key': key } });
    assert.equal(huge.status, 413, huge.text);
    const [base64] = keyedRoutes(dataset).filter((r) => r.path === '/media/base64');
    const ok = await send(base64!, unique('fits'), key);
    assert.equal(ok.status, 201, ok.text);
  });

  test('a key used on one endpoint and sent to another → 409 naming the first endpoint', async () => {
    const key = unique('key');
    assert.equal((await s.request('POST', '/tokens', { json: { name: 'y', scopes: ['media:read'] }, headers: { 'idempotency-key': key } })).status, 201);
    const refused = await s.request('POST', '/datasets', { json: { name: 'y' }, headers: { 'idempotency-key': key } });
    assert.equal(refused.status, 409);
    assert.match(refused.body.error.message, /was already used at .* for POST \/v1\/tokens; use a new key/);
  });

  test('a remembered token answer is sealed: the database holds no token secret', async () => {
    const key = unique('key');
    const created = await s.request('POST', '/tokens', { json: { name: 'sealed', scopes: ['media:read'] }, headers: { 'idempotency-key': key } });
    assert.equal(created.status, 201);
    const rows = await s.server.ctx.metadata.db.selectFrom('idempotency_keys').selectAll().where('idem_key', '=', key).execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(created.body.token), 'the secret is not stored in clear');
    assert.ok(!JSON.stringify(rows).includes(created.body.id));
  });

  test('a 5xx is not remembered: uploads while the file store is down answer 503, and the same key works once it is back', async () => {
    const tmp = path.join(blobRoot, '.tmp');
    const [base64, multipartRoute] = keyedRoutes(dataset).filter((r) => r.path.startsWith('/media'));
    for (const route of [base64!, multipartRoute!]) {
      const v = unique('down');
      const key = unique('key');
      // The store cannot create its temp files: every write fails (a disk gone read-only, say).
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.writeFileSync(tmp, '');
      let down: TestResponse;
      try {
        down = await send(route, v, key);
      } finally {
        fs.rmSync(tmp, { force: true });
        fs.mkdirSync(tmp);
      }
      assert.equal(down.status, 503, down.text);
      assert.equal(down.body.error.code, 'storage_error');
      const back = await send(route, v, key);
      assert.equal(back.status, 201, back.text);
      assert.equal(back.headers.get('idempotent-replayed'), null, 'the 503 was not remembered');
      assert.equal((await send(route, v, key)).text, back.text);
      assert.equal(await effects(route, v), 1);
    }
  });

  test('the OpenAPI document shows the Idempotency-Key header on the keyed endpoints', async () => {
    const doc = (await s.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>> };
    for (const p of ['/v1/tokens', '/v1/datasets', '/v1/media', '/v1/media/base64', '/v1/datasets/{name}/ingest', '/v1/monitors', '/v1/channels', '/v1/searches']) {
      const params = doc.paths[p]!.post!.parameters ?? [];
      assert.ok(params.some((x) => x.in === 'header' && x.name === 'Idempotency-Key'), `${p} documents the header`);
    }
    assert.ok(!(doc.paths['/v1/tokens']!.get!.parameters ?? []).some((x) => x.name === 'Idempotency-Key'));
  });
});
