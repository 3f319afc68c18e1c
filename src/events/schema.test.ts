import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

describe('dataset schema', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_SCHEMA_CACHE_TTL_MS: '60000' } });
  });
  after(() => s.close());

  const ingest = (name: string, events: unknown[]) => s.request('POST', `/datasets/${name}/ingest`, { json: events });

  test('canonical fields, payload keys ordered by cardinality, nested dot paths, ≤ 5 string samples, ≤ 50 keys', async () => {
    const events = Array.from({ length: 60 }, (_, i) => {
      const payload: Record<string, unknown> = { match: { map: `map${i % 7}`, round: i % 3 }, player: `p${i}`, constant: 'same', flag: i % 2 === 0 };
      // 55 keys with one value each: together more than 50 keys
      for (let k = 0; k < 55; k++) payload[`k${String(k).padStart(2, '0')}`] = 'v';
      return { event: 'e', payload };
    });
    assert.equal((await ingest('game', events)).status, 200);
    const r = await s.request('GET', '/datasets/game/schema');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-cache'), 'MISS');
    assert.equal(r.body.dataset, 'game');
    assert.deepEqual(r.body.canonical_fields, [
      { name: 'actor', type: 'string' }, { name: 'bytes_raw', type: 'number' }, { name: 'dataset', type: 'string' },
      { name: 'event', type: 'string' }, { name: 'event_id', type: 'uuid' }, { name: 'ingested_at', type: 'datetime' },
      { name: 'message', type: 'string' }, { name: 'severity', type: 'severity (ordinal)' }, { name: 'source', type: 'string' },
      { name: 'ts', type: 'datetime' },
    ]);
    const fields = r.body.payload_fields as Array<{ key: string; cardinality: number; samples: string[] }>;
    assert.equal(fields.length, 50);
    assert.deepEqual(fields.slice(0, 4).map((f) => f.key), ['player', 'match.map', 'match.round', 'flag']);
    for (let i = 1; i < fields.length; i++) assert.ok(fields[i - 1]!.cardinality >= fields[i]!.cardinality);
    const player = fields[0]!;
    assert.ok(player.cardinality >= 55 && player.cardinality <= 65, `approximate: ${player.cardinality}`);
    assert.equal(player.samples.length, 5);
    assert.ok(player.samples.every((v) => typeof v === 'string' && /^p\d+$/.test(v)));
    assert.deepEqual(fields.find((f) => f.key === 'match.round')!.samples, ['0', '1', '2']);
    assert.deepEqual(fields.find((f) => f.key === 'flag')!.samples, ['false', 'true']);
    assert.ok(fields.every((f) => f.samples.length <= 5));
    assert.match(r.body.generated_at, /Z$/);
  });

  test('only the last 24 hours count', async () => {
    const now = s.server.ctx.clock.now();
    await ingest('window', [
      { event: 'old', ts: now - 25 * 3_600_000, payload: { old_key: 1 } },
      { event: 'new', ts: now - 23 * 3_600_000, payload: { new_key: 1 } },
    ]);
    const r = await s.request('GET', '/datasets/window/schema');
    assert.deepEqual(r.body.payload_fields.map((f: { key: string }) => f.key), ['new_key']);
  });

  test('cache: HIT within the TTL, MISS after it expires; per dataset', async () => {
    await ingest('cached', [{ payload: { a: 1 } }]);
    const first = await s.request('GET', '/datasets/cached/schema');
    assert.equal(first.headers.get('x-cache'), 'MISS');
    await ingest('cached', [{ payload: { b: 1 } }]);
    const second = await s.request('GET', '/datasets/cached/schema');
    assert.equal(second.headers.get('x-cache'), 'HIT');
    assert.deepEqual(second.body, first.body);
    s.clock.advance(61_000);
    const third = await s.request('GET', '/datasets/cached/schema');
    assert.equal(third.headers.get('x-cache'), 'MISS');
    assert.deepEqual(third.body.payload_fields.map((f: { key: string }) => f.key).sort(), ['a', 'b']);
    // another mode of the same project has its own entry
    await s.request('POST', '/datasets/cached/ingest', { json: [{ payload: { t: 1 } }], token: s.tenants.aTest.token });
    const test = await s.request('GET', '/datasets/cached/schema', { token: s.tenants.aTest.token });
    assert.equal(test.headers.get('x-cache'), 'MISS');
    assert.deepEqual(test.body.payload_fields.map((f: { key: string }) => f.key), ['t']);
  });

  test('a dataset with no recent events has no payload fields; unknown is 404', async () => {
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'empty' } })).status, 201);
    const r = await s.request('GET', '/datasets/empty/schema');
    assert.deepEqual(r.body.payload_fields, []);
    assert.equal((await s.request('GET', '/datasets/nope/schema')).status, 404);
  });
});

test('schema cache TTL from OPS_SCHEMA_CACHE_TTL_MS expires in real time', async () => {
  // Long enough that the second request lands inside it on a loaded CI machine (50 ms did not).
  const ttlMs = 1500;
  const s = await startTestServer({ env: { OPS_SCHEMA_CACHE_TTL_MS: String(ttlMs) } });
  try {
    await s.request('POST', '/datasets/short/ingest', { json: [{ payload: { a: 1 } }] });
    const cachedAt = Date.now();
    assert.equal((await s.request('GET', '/datasets/short/schema')).headers.get('x-cache'), 'MISS');
    const second = await s.request('GET', '/datasets/short/schema');
    if (Date.now() - cachedAt < ttlMs) assert.equal(second.headers.get('x-cache'), 'HIT');
    await new Promise((r) => setTimeout(r, ttlMs + 100));
    assert.equal((await s.request('GET', '/datasets/short/schema')).headers.get('x-cache'), 'MISS');
  } finally {
    await s.close();
  }
});
