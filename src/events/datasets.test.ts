import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { matchAll } from '../engine/event-store.js';

describe('datasets', () => {
  let s: TestServer;
  before(async () => {
    // org A on free: a cap of 3 datasets
    s = await startTestServer({ plan: 'free' });
  });
  after(() => s.close());

  const list = async (token = s.tenants.a.token) => (await s.request('GET', '/datasets', { token })).body.datasets as Array<Record<string, unknown>>;
  const ingest = (name: string, events: unknown[], token = s.tenants.a.token) => s.request('POST', `/datasets/${name}/ingest`, { json: events, token });

  test('created by first ingest, listed newest first with events_last_24h from the rollup', async () => {
    assert.equal((await ingest('alpha', [{ event: 'a' }, { event: 'b' }])).status, 200);
    s.clock.advance(1000);
    await ingest('beta', [{ event: 'c' }]);
    // an event 2 days old does not count in the last 24 hours
    await ingest('beta', [{ event: 'old', ts: s.server.ctx.clock.now() - 2 * 86_400_000 }]);
    const datasets = await list();
    assert.deepEqual(datasets.map((d) => d.name), ['beta', 'alpha']);
    assert.equal(datasets[0]!.events_last_24h, 1);
    assert.equal(datasets[1]!.events_last_24h, 2);
    assert.equal(datasets[0]!.retention_days, 7);
    assert.equal('default_severity' in datasets[0]!, false);
    assert.match(String(datasets[0]!.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test('past the plan cap, events overflow into default with payload._dataset', async () => {
    await ingest('gamma', [{ event: 'g' }]);
    const r = await ingest('delta', [{ event: 'd1', payload: { k: 1 } }]);
    assert.equal(r.status, 200);
    const names = (await list()).map((d) => d.name).sort();
    assert.deepEqual(names, ['alpha', 'beta', 'default', 'gamma']);
    const { store } = s.server.events;
    const events = (await store.query(s.tenants.a, { filter: matchAll, limit: 100 })).events;
    const d1 = events.find((e) => e.event === 'd1')!;
    assert.equal(d1.dataset, 'default');
    assert.deepEqual(JSON.parse(d1.payloadJson), { k: 1, _dataset: 'delta' });
    // default may be written to directly and does not count toward the cap
    assert.equal((await ingest('default', [{ event: 'direct' }])).status, 200);
    // POST /datasets past the cap is refused
    const created = await s.request('POST', '/datasets', { json: { name: 'epsilon' } });
    assert.equal(created.status, 402);
    assert.equal(created.body.error.metric, 'datasets');
  });

  test('default cannot be renamed or archived (409); names are reserved', async () => {
    assert.equal((await s.request('PATCH', '/datasets/default', { json: { name: 'other' } })).status, 409);
    assert.equal((await s.request('DELETE', '/datasets/default')).status, 409);
    assert.equal((await s.request('PATCH', '/datasets/alpha', { json: { name: 'default' } })).status, 409);
    assert.equal((await s.request('PATCH', '/datasets/alpha', { json: { name: 'beta' } })).status, 409);
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'default' } })).status, 409);
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'alpha' } })).status, 409);
  });

  test('rename keeps events; PATCH changes retention and default_severity', async () => {
    const r = await s.request('PATCH', '/datasets/alpha', { json: { name: 'alpha2', retention_days: 3, default_severity: 'error' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.name, 'alpha2');
    assert.equal(r.body.retention_days, 3);
    assert.equal(r.body.default_severity, 'error');
    assert.equal(r.body.events_last_24h, 2);
    const { store } = s.server.events;
    const events = (await store.query(s.tenants.a, { filter: matchAll, limit: 100 })).events;
    assert.deepEqual(events.filter((e) => e.dataset === 'alpha2').map((e) => e.event).sort(), ['a', 'b']);
    assert.equal((await s.request('PATCH', '/datasets/alpha', { json: { retention_days: 3 } })).status, 404);
    // retention above the plan's is refused
    assert.equal((await s.request('PATCH', '/datasets/alpha2', { json: { retention_days: 8 } })).status, 400);
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'Bad Name' } })).status, 400);
    // ingest to the new name reaches the same dataset
    await ingest('alpha2', [{ event: 'c' }]);
    assert.equal((await list()).find((d) => d.name === 'alpha2')!.events_last_24h, 3);
    // the old name is free again, but the cap is full: it overflows into default
    await ingest('alpha', [{ event: 'new' }]);
    assert.ok(!(await list()).some((d) => d.name === 'alpha'));
  });

  test('archive: leaves the list, ingest answers 409, a second DELETE is 404, cap frees up', async () => {
    const r = await s.request('DELETE', '/datasets/gamma');
    assert.equal(r.status, 200);
    assert.equal(r.body.archived, true);
    assert.ok(!(await list()).some((d) => d.name === 'gamma'));
    const again = await ingest('gamma', [{ event: 'x' }]);
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'conflict');
    assert.equal((await s.request('DELETE', '/datasets/gamma')).status, 404);
    assert.equal((await s.request('GET', '/datasets/gamma/schema')).status, 404);
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'gamma' } })).status, 409);
  });

  test('scopes: logs:read lists but cannot change', async () => {
    const reader = await s.token(s.tenants.a, ['logs:read']);
    assert.equal((await s.request('GET', '/datasets', { token: reader })).status, 200);
    for (const [method, path] of [['POST', '/datasets'], ['PATCH', '/datasets/beta'], ['DELETE', '/datasets/beta']] as const) {
      const r = await s.request(method, path, { token: reader, json: { name: 'zz' } });
      assert.equal(r.status, 403, `${method} ${path}`);
    }
    const writer = await s.token(s.tenants.a, ['logs:write']);
    assert.equal((await s.request('GET', '/datasets', { token: writer })).status, 403);
  });

  test('events_last_24h follows each ingest, the window moving on and a delete, though the counts are served again until then', async () => {
    // Tenant b, last: this moves the clock a day on.
    const b = s.tenants.b;
    const count = async () => Number((await list(b.token)).find((d) => d.name === 'counted')!.events_last_24h);
    await ingest('counted', [{ event: 'e0' }], b.token);
    const before = await count();
    assert.equal(await count(), before);
    await ingest('counted', [{ event: 'e1' }, { event: 'e2' }], b.token);
    assert.equal(await count(), before + 2);
    // 24 hours and a minute on, none of them is in the window any more.
    s.clock.advance(86_400_000 + 60_000);
    assert.equal(await count(), 0);
    await ingest('counted', [{ event: 'e3' }], b.token);
    assert.equal(await count(), 1);
    const { store } = s.server.events;
    const counted = (await s.server.events.datasets.listActive(b)).find((d) => d.name === 'counted')!;
    await store.deleteBefore(b, counted.id, s.server.ctx.clock.now() + 60_000);
    assert.equal(await count(), 0);
  });
});
