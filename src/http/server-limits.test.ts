import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { rawConnection, type RawConnection } from '../test-support/media/test-helpers.js';
import { TailClient } from '../test-support/tail/test-client.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with how long after `since` the connection closed, or Infinity past `withinMs`. */
const closedAfter = async (c: RawConnection, since: number, withinMs: number) =>
  (await Promise.race([c.closed, sleep(withinMs).then(() => Infinity)])) - since;

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`;

/** Sends one request on a kept-alive connection and waits for its whole (small) answer. */
async function exchange(c: RawConnection, request: string): Promise<string> {
  const before = c.received().length;
  c.socket.write(request);
  for (let i = 0; i < 100; i++) {
    const answer = c.received().slice(before);
    const head = answer.indexOf('\r\n\r\n');
    const length = /content-length: (\d+)/i.exec(answer);
    if (head >= 0 && length && answer.length >= head + 4 + Number(length[1])) return answer;
    if (c.socket.destroyed) break;
    await sleep(20);
  }
  return c.received().slice(before);
}

describe('connection timeouts on both listeners', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      env: { OPS_HEADERS_TIMEOUT_MS: '300', OPS_KEEPALIVE_TIMEOUT_MS: '300', OPS_IDLE_TIMEOUT_MS: '10000', OPS_TAIL_HEARTBEAT_MS: '100' },
    });
  });
  after(() => s.close());

  for (const listener of ['api', 'cdn'] as const) {
    test(`${listener}: a client that stalls in the middle of its headers is answered 4xx and cut after OPS_HEADERS_TIMEOUT_MS`, async () => {
      const c = await rawConnection(listener === 'api' ? s.apiUrl : s.cdnUrl);
      const started = Date.now();
      c.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
      const after = await closedAfter(c, started, 3_000);
      c.socket.destroy();
      assert.ok(after >= 250 && after < 2_000, `closed after ${after} ms`);
      assert.match(c.received(), /^HTTP\/1\.1 4\d\d /);
    });

    test(`${listener}: a kept-alive connection with no next request is closed after OPS_KEEPALIVE_TIMEOUT_MS`, async () => {
      const c = await rawConnection(listener === 'api' ? s.apiUrl : s.cdnUrl);
      assert.match(await exchange(c, get('/healthz')), /^HTTP\/1\.1 200 /);
      const answered = Date.now();
      const after = await closedAfter(c, answered, 3_000);
      c.socket.destroy();
      assert.ok(after >= 200 && after < 2_000, `closed after ${after} ms`);
    });
  }
});

describe('live tail outlives the idle timeout (OPS_IDLE_TIMEOUT_MS=400, heartbeat every 100 ms)', () => {
  let s: TestServer;
  before(async () => {
    // The event store opens with the server: its first open takes longer than this short idle
    // timeout, and must not happen while a connection waits (the 60 s default leaves room for it).
    // Route schemas compiled at start, as `opsctl serve` does: compiled at the tail route's first
    // use (test servers' default), the first answer took over 400 ms on a loaded machine.
    s = await startTestServer({ env: { OPS_IDLE_TIMEOUT_MS: '400', OPS_TAIL_HEARTBEAT_MS: '100', OPS_TAIL_IDLE_TIMEOUT_MS: '60000' }, compileSchemasAtStart: true });
  });
  after(() => s.close());

  test('a stream with no events stays open for 5× the idle timeout: heartbeats are traffic', async () => {
    const opened = await TailClient.open(s.baseUrl, s.tenants.a.token, '');
    assert.equal(opened.status, 200, 'body' in opened ? JSON.stringify(opened.body) : '');
    const { client } = opened as { client: TailClient };
    await sleep(2_000);
    assert.equal(client.ended, false, 'the idle timeout cut a live tail stream');
    assert.ok(client.comments.filter((c) => c === 'heartbeat').length >= 5, JSON.stringify(client.comments.slice(-3)));
    client.close();
  });
});

describe('OPS_MAX_CONNECTIONS=3 on each listener', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_MAX_CONNECTIONS: '3' } });
  });
  after(() => s.close());

  for (const listener of ['api', 'cdn'] as const) {
    test(`${listener}: a 4th connection is closed unanswered; once one closes, a new one is served`, async () => {
      const url = listener === 'api' ? s.apiUrl : s.cdnUrl;
      const held = await Promise.all([0, 1, 2].map(() => rawConnection(url)));
      // Each is served once, so the server has certainly accepted all three.
      for (const c of held) assert.match(await exchange(c, get('/healthz')), /^HTTP\/1\.1 200 /);

      const refused = await rawConnection(url);
      refused.socket.write(get('/healthz'));
      const after = await closedAfter(refused, Date.now(), 2_000);
      refused.socket.destroy();
      assert.ok(after < 2_000, 'the connection beyond the limit was closed');
      assert.equal(refused.received(), '', 'and never answered');

      held[0]!.socket.destroy();
      await held[0]!.closed;
      let answer = '';
      for (let i = 0; i < 50 && !answer.startsWith('HTTP/1.1 200'); i++) {
        await sleep(20); // the server sees the close a moment later
        const next = await rawConnection(url);
        answer = await exchange(next, get('/healthz', 'Connection: close\r\n'));
        next.socket.destroy();
      }
      assert.match(answer, /^HTTP\/1\.1 200 /);
      held.forEach((c) => c.socket.destroy());
      assert.ok(
        s.logs.some((line) => line.includes('OPS_MAX_CONNECTIONS') && line.includes(`"listener":"${listener}"`)),
        'refusals are logged, naming the variable',
      );
    });
  }
});
