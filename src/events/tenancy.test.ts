import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { matchAll } from '../engine/event-store.js';

/** Org A project 1 live owns "shared"; every other tenant sees nothing of it. */
describe('tenant matrix for every dataset endpoint', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.request('POST', '/datasets/shared/ingest', { json: [{ event: 'mine', payload: { secret: 'a' } }] })).status, 200);
  });
  after(() => s.close());

  const others = () => ({ aTest: s.tenants.aTest, aOther: s.tenants.aOther, b: s.tenants.b });

  test('GET /datasets lists only the caller’s project and mode', async () => {
    for (const [label, t] of Object.entries(others())) {
      const r = await s.request('GET', '/datasets', { token: t.token });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.datasets, [], label);
    }
  });

  test('schema, PATCH and DELETE of another tenant’s dataset are 404', async () => {
    for (const [label, t] of Object.entries(others())) {
      assert.equal((await s.request('GET', '/datasets/shared/schema', { token: t.token })).status, 404, label);
      assert.equal((await s.request('PATCH', '/datasets/shared', { token: t.token, json: { name: 'stolen' } })).status, 404, label);
      assert.equal((await s.request('DELETE', '/datasets/shared', { token: t.token })).status, 404, label);
    }
    const mine = await s.request('GET', '/datasets', {});
    assert.deepEqual(mine.body.datasets.map((d: { name: string }) => d.name), ['shared']);
  });

  test('ingest and POST with the same name create separate datasets per tenant; events stay apart', async () => {
    for (const [label, t] of Object.entries(others())) {
      assert.equal((await s.request('POST', '/datasets/shared/ingest', { token: t.token, json: [{ event: label }] })).status, 200, label);
      assert.equal((await s.request('POST', '/datasets', { token: t.token, json: { name: 'own' } })).status, 201, label);
      const schema = await s.request('GET', '/datasets/shared/schema', { token: t.token });
      assert.deepEqual(schema.body.payload_fields, [], label);
    }
    const { store } = s.server.events;
    for (const [label, t] of Object.entries({ a: s.tenants.a, ...others() })) {
      const events = (await store.query(t, { filter: matchAll, limit: 100 })).events;
      assert.deepEqual(events.map((e) => e.event), [label === 'a' ? 'mine' : label], label);
    }
    const list = await s.request('GET', '/datasets', {});
    assert.deepEqual(list.body.datasets.map((d: { name: string; events_last_24h: number }) => [d.name, d.events_last_24h]), [['shared', 1]]);
  });

  test('archiving in one tenant leaves the same name elsewhere untouched', async () => {
    assert.equal((await s.request('DELETE', '/datasets/shared', { token: s.tenants.b.token })).status, 200);
    assert.equal((await s.request('POST', '/datasets/shared/ingest', { json: [{ event: 'still' }] })).status, 200);
    assert.equal((await s.request('POST', '/datasets/shared/ingest', { token: s.tenants.aTest.token, json: [{ event: 'still' }] })).status, 200);
  });
});
