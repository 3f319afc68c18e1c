import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../test-support/test-server.js';

test('over HTTP: every query, count and schema right after the acknowledgements sees the events, with the loader far behind', async () => {
  // One event per load transaction: 200 one-event requests leave the loader ~200 loads behind.
  // A read may wait out the whole backlog: on ClickHouse each load is an INSERT of its own (~20-40 ms).
  const s = await startTestServer({ env: { OPS_EVENTS_LOAD_BATCH: '1', OPS_EVENTS_READ_WAIT_MS: '60000' } });
  try {
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => s.request('POST', '/datasets/fresh/ingest', { json: { event: 'e', message: `m${i}`, payload: { n: i } } })),
    );
    assert.deepEqual([...new Set(answers.map((r) => r.status))], [200]);
    // On ClickHouse an ingest is answered once its events are loaded (read-your-writes across
    // hosts): no backlog is left to read past there; on DuckDB the answer rests on the log.
    if ((await s.server.events.store.dialect()) === 'duckdb') assert.ok(s.server.events.store.backlog > 0, 'the loader is behind when the reads arrive');
    else assert.equal(s.server.events.store.backlog, 0, 'on ClickHouse every answered event is loaded');
    const [group, list, schema] = await Promise.all([
      s.request('POST', '/query', { json: { q: 'dataset:fresh group by event' } }),
      s.request('GET', '/datasets'),
      s.request('GET', '/datasets/fresh/schema'),
    ]);
    assert.deepEqual((group.body as { groups: unknown[] }).groups, [{ value: 'e', count: 200 }]);
    const fresh = (list.body as { datasets: Array<{ name: string; events_last_24h: number }> }).datasets.find((d) => d.name === 'fresh');
    assert.equal(fresh?.events_last_24h, 200);
    assert.equal(schema.status, 200, schema.text);
    assert.ok((schema.body as { payload_fields: Array<{ key: string }> }).payload_fields.some((f) => f.key === 'n'));
  } finally {
    await s.close();
  }
});

test('over HTTP: a read that cannot wait for the loader answers 503 storage_error with Retry-After', async () => {
  const s = await startTestServer({ env: { OPS_EVENTS_LOAD_BATCH: '1', OPS_EVENTS_READ_WAIT_MS: '1' } });
  try {
    await Promise.all(Array.from({ length: 200 }, (_, i) => s.request('POST', '/datasets/late/ingest', { json: { event: 'e', message: `m${i}` } })));
    const r = await s.request('POST', '/query', { json: { q: 'dataset:late' } });
    assert.equal(r.status, 503, r.text);
    assert.equal((r.body as { error: { code: string } }).error.code, 'storage_error');
    assert.equal(r.headers.get('retry-after'), '1');
  } finally {
    await s.close();
  }
});

test('over HTTP: the same page and counts asked again after an ingest, a rename or a retention delete are read again', async () => {
  const s = await startTestServer();
  try {
    const page = async () => {
      const r = await s.request('POST', '/query', { json: { q: 'dataset:again' } });
      assert.equal(r.status, 200, r.text);
      return (r.body as { events: Array<{ message: string; dataset: string }> }).events;
    };
    const count = async () => ((await s.request('GET', '/datasets')).body as { datasets: Array<{ name: string; events_last_24h: number }> }).datasets[0]?.events_last_24h;
    await s.request('POST', '/datasets/again/ingest', { json: { event: 'e', message: 'first' } });
    assert.deepEqual((await page()).map((e) => e.message), ['first']);
    assert.deepEqual((await page()).map((e) => e.message), ['first']);
    assert.equal(await count(), 1);
    s.clock.advance(1);
    await s.request('POST', '/datasets/again/ingest', { json: { event: 'e', message: 'second' } });
    assert.deepEqual((await page()).map((e) => e.message), ['second', 'first']);
    assert.equal(await count(), 2);
    // Another tenant's events do not change this one's answer; its own page is its own.
    await s.request('POST', '/datasets/again/ingest', { json: { event: 'e', message: 'theirs' }, token: s.tenants.b.token });
    assert.deepEqual((await page()).map((e) => e.message), ['second', 'first']);
    // A rename shows in the page served again (names are given per request).
    assert.equal((await s.request('PATCH', '/datasets/again', { json: { name: 'renamed' } })).status, 200);
    const renamed = await s.request('POST', '/query', { json: { q: 'dataset:renamed' } });
    assert.deepEqual((renamed.body as { events: Array<{ dataset: string }> }).events.map((e) => e.dataset), ['renamed', 'renamed']);
    const dataset = (await s.server.events.datasets.listActive(s.tenants.a)).find((d) => d.name === 'renamed')!;
    await s.server.events.store.deleteBefore(s.tenants.a, dataset.id, s.server.ctx.clock.now() + 1);
    assert.deepEqual(((await s.request('POST', '/query', { json: { q: 'dataset:renamed' } })).body as { events: unknown[] }).events, []);
  } finally {
    await s.close();
  }
});
