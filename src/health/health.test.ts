import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { registerHealthRoutes, type HealthChecks } from './routes.js';

describe('GET /readyz', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('the embedded default: every store it needs up, Redis and NATS off (not configured)', async () => {
    const res = await s.request('GET', `${s.apiUrl}/readyz`, { token: null });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      ok: true,
      stores: { metadata: { state: 'up' }, events: { state: 'up' }, blobs: { state: 'up' }, redis: { state: 'off' }, nats: { state: 'off' } },
    });
  });
});

describe('readiness rules', () => {
  /** The health routes alone, on a real listener, over the given checks. */
  const serve = async (checks: HealthChecks) => {
    const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
    registerHealthRoutes(app, checks);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  };
  const up = async () => {};
  const failing = async () => {
    throw new Error('connect ECONNREFUSED 10.1.2.3:5432');
  };

  test('a required store down → 503 with Retry-After, naming it and the kind of failure (never the error text: it names hosts); the others still reported', async () => {
    const app = await serve({ required: { metadata: up, events: failing }, optional: { redis: async () => 'up', nats: async () => 'off' } });
    try {
      const res = await fetch(`${app.url}/readyz`);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '1');
      assert.deepEqual(await res.json(), {
        ok: false,
        stores: { metadata: { state: 'up' }, events: { state: 'down', error: 'not reachable (details in the server log)' }, redis: { state: 'up' }, nats: { state: 'off' } },
      });
    } finally {
      await app.close();
    }
  });

  test('Redis and NATS down degrade, not unready: 200 with their state down', async () => {
    const app = await serve({ required: { metadata: up }, optional: { redis: async () => 'down', nats: failing as () => Promise<'down'> } });
    try {
      const res = await fetch(`${app.url}/readyz`);
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.ok, true);
      assert.equal(body.stores.redis.state, 'down');
      assert.equal(body.stores.nats.state, 'down');
    } finally {
      await app.close();
    }
  });

  test('a check that never answers counts as down after its bound: /readyz does not hang', async () => {
    const app = await serve({ required: { metadata: () => new Promise<void>(() => {}) }, optional: {} });
    try {
      const start = performance.now();
      const res = await fetch(`${app.url}/readyz`);
      assert.equal(res.status, 503);
      assert.ok(performance.now() - start < 3_000);
      assert.match((await res.json()).stores.metadata.error, /no answer in time/);
    } finally {
      await app.close();
    }
  });
});
