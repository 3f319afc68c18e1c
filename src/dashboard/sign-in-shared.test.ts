import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { freePort, reachable, services } from '../test-support/cluster/test-services.js';
import { Browser, member, password } from '../test-support/dashboard/test-session.js';
import { needs } from '../test-support/ci.js';

const missing = (await reachable(services.redis.host, services.redis.port)) ? false : `Redis not reachable at ${services.redis.host}:${services.redis.port} (.ci/run starts it)`;
// Several processes sign cursors with one key (required with OPS_REDIS_URL on PostgreSQL).
const secretKey = crypto.randomBytes(32).toString('base64');
const redisUrl = (port = services.redis.port) => `redis://${services.redis.host}:${port}/?keyPrefix=ops-test-${crypto.randomBytes(6).toString('hex')}:`;

describe('sign-in throttling shared through Redis (OPS_REDIS_URL): one allowance across API processes', needs(missing), () => {
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    const env = { OPS_REDIS_URL: redisUrl(), OPS_SECRET_KEY: secretKey };
    [a, b] = await Promise.all([startTestServer({ env }), startTestServer({ env })]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  test('5 failures on one process and 5 on another: the 11th attempt is refused on both, even with the right password', async () => {
    // The same person on both servers (their own metadata here; the count is by e-mail address).
    await Promise.all([member(a, 'shared@example.com', 'Viewer'), member(b, 'shared@example.com', 'Viewer')]);
    for (let i = 0; i < 10; i++) {
      const res = await new Browser(i % 2 ? b : a).signIn('shared@example.com', `wrong guess ${i}`);
      assert.equal(res.status, 401, res.text);
    }
    for (const s of [a, b]) {
      const res = await new Browser(s).signIn('shared@example.com', password);
      assert.equal(res.status, 429, res.text);
      assert.equal(res.body.error.code, 'rate_limited');
      assert.ok(Number(res.headers.get('retry-after')) > 0);
    }
    // Another address's allowance is untouched by these: another e-mail signs in.
    await member(a, 'other@example.com', 'Viewer');
    assert.equal((await new Browser(a).signIn('other@example.com', password)).status, 200);
  });
});

describe('sign-in throttling while Redis does not answer: each process counts on its own', () => {
  let s: TestServer;
  before(async () => {
    // A port nothing listens on: the shared store is down from the start.
    s = await startTestServer({ env: { OPS_REDIS_URL: redisUrl(await freePort()), OPS_SECRET_KEY: secretKey } });
  });
  after(() => s?.close());

  test('sign-in works, and 10 failures still lead to 429', async () => {
    await member(s, 'alone@example.com', 'Viewer');
    for (let i = 0; i < 10; i++) assert.equal((await new Browser(s).signIn('alone@example.com', `wrong ${i}`)).status, 401);
    const res = await new Browser(s).signIn('alone@example.com', password);
    assert.equal(res.status, 429, res.text);
  });
});
