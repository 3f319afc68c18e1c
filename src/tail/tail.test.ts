import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startTestServer, type TestServer, type TestTenant } from '../test-support/test-server.js';
import type { EventStore } from '../engine/event-store.js';
import { TailClient, type OpenResult } from '../test-support/tail/test-client.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function opened(result: OpenResult): TailClient {
  assert.equal(result.status, 200, 'body' in result ? JSON.stringify(result.body) : '');
  return (result as { client: TailClient }).client;
}

/** Retries an open until it is accepted: the server learns of a closed client asynchronously. */
async function openWhenFree(s: TestServer, token: string, q = ''): Promise<{ client: TailClient; waitedMs: number }> {
  const started = Date.now();
  for (;;) {
    const result = await TailClient.open(s.baseUrl, token, q);
    if (result.status === 200) return { client: (result as { client: TailClient }).client, waitedMs: Date.now() - started };
    assert.equal(result.status, 429);
    if (Date.now() - started > 3_000) assert.fail('the slot was not freed within 3 s');
    await sleep(10);
  }
}

describe('live tail', () => {
  let s: TestServer;
  let a: TestTenant;
  const ingest = async (dataset: string, events: unknown[], tenant: TestTenant = a) => {
    const r = await s.request('POST', `/datasets/${dataset}/ingest`, { json: events, token: tenant.token });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.failed, 0, r.text);
  };
  const open = async (q: string, token = a.token, lastEventId?: string) => opened(await TailClient.open(s.baseUrl, token, q, { lastEventId }));

  before(async () => {
    s = await startTestServer({ env: { OPS_TAIL_HEARTBEAT_MS: '60000', OPS_TAIL_IDLE_TIMEOUT_MS: '60000', OPS_TAIL_POLL_MS: '300' } });
    a = s.tenants.a;
    // Datasets a query may name must exist.
    await ingest('game', [{ event: 'setup', message: 'before any session' }]);
    await ingest('auth', [{ event: 'setup' }]);
  });
  after(() => s.close());

  test('refusals carry status and code, checked in the order token, scope, plan, query, slots', async () => {
    const refuse = async (token: string | null, q: unknown, status: number, code: string, headers: Record<string, string> = {}) => {
      const r = await s.request('POST', '/query/tail', { token, json: q, headers });
      assert.equal(r.status, status, r.text);
      assert.equal(r.body.error.code, code, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(r.body.error.request_id, r.headers.get('x-request-id'));
      return r.body.error;
    };
    await refuse(null, { q: '' }, 401, 'unauthorized');
    await refuse('ops_live_not-a-token', { q: '' }, 401, 'unauthorized');
    const noScope = await s.token(a, ['logs:write']);
    assert.equal((await refuse(noScope, { q: '' }, 403, 'forbidden')).required_scope, 'logs:read');
    const b = s.tenants.b;
    assert.equal((await refuse(b.token, { q: '' }, 402, 'tier_upgrade_required')).required_plan, 'pro');
    // scope before plan: a free-plan token without the scope is 403, not 402
    await refuse(await s.token(b, ['logs:write']), { q: '' }, 403, 'forbidden');
    // plan before query: a free-plan token with a bad or aggregating query is 402, not 400
    await refuse(b.token, { q: 'severity >= warn group by source' }, 402, 'tier_upgrade_required');
    await refuse(b.token, { q: '((' }, 402, 'tier_upgrade_required');
    await refuse(b.token, {}, 402, 'tier_upgrade_required');
    // query
    const parse = await refuse(a.token, { q: 'severity >= banana' }, 400, 'soql_parse_error');
    assert.equal(typeof parse.position, 'number');
    await refuse(a.token, { q: 'dataset in (game, auth) AND severity >= warn group by source' }, 400, 'soql_tail_aggregation_unsupported');
    await refuse(a.token, { q: 'org_id:x' }, 400, 'soql_reserved_field');
    await refuse(a.token, { q: 'dataset:nope' }, 404, 'not_found');
    await refuse(a.token, {}, 400, 'bad_request');
    await refuse(a.token, { q: '' }, 400, 'bad_request', { 'last-event-id': 'abc' });
    // slots: three sessions, then a bad query is still 400 and a good one 429
    const token = await s.token(a, ['logs:read']);
    const clients = [await open('', token), await open('', token), await open('', token)];
    await refuse(token, { q: 'severity >= banana' }, 400, 'soql_parse_error');
    await refuse(token, { q: '' }, 429, 'tail_session_limit_exceeded');
    await Promise.all(clients.map((c) => c.close()));
  });

  test('the OpenAPI document describes the route as a text/event-stream answer', async () => {
    const doc = (await s.request('GET', '/openapi.json', { token: null })).body;
    const op = doc.paths['/v1/query/tail'].post;
    assert.ok(op.responses['200'].content['text/event-stream']);
    assert.equal(op['x-required-scope'], 'logs:read');
  });

  test('the stream is text/event-stream with id and data lines read by an SSE client library', async () => {
    const result = await TailClient.open(s.baseUrl, a.token, 'event:hello');
    const client = opened(result);
    assert.match(result.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(result.headers.get('x-request-id'));
    await ingest('game', [{ event: 'hello', severity: 'warn', actor: 'p1', message: 'hi', payload: { k: 1 } }]);
    await client.until((c) => c.events.length === 1);
    const [e] = client.events;
    assert.match(e!.lastEventId, /^\d+$|^\d+(~(?:[0-9a-f]{16})?\.\d+)+$/, 'a seq, or per log positions on ClickHouse');
    assert.deepEqual(Object.keys(e!.data).sort(), ['actor', 'bytes_raw', 'dataset', 'event', 'event_id', 'ingested_at', 'message', 'payload', 'severity', 'ts']);
    assert.equal(e!.data.org_id, undefined);
    assert.equal(e!.data.project_id, undefined);
    assert.equal(e!.data.severity, 'warn');
    assert.equal(e!.data.dataset, 'game');
    assert.deepEqual(e!.data.payload, { k: 1 });
    assert.match(e!.data.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await client.close();
  });

  test('only events ingested after opening, matching, of the same tenant and mode arrive, in order', async () => {
    const client = await open('dataset:game AND severity >= warn');
    await ingest('game', [
      { event: 'm1', severity: 'warn' },
      { event: 'skip-info', severity: 'info' },
      { event: 'm2', severity: 'error' },
    ]);
    await ingest('auth', [{ event: 'skip-other-dataset', severity: 'fatal' }]);
    await ingest('game', [{ event: 'skip-test-mode', severity: 'fatal' }], s.tenants.aTest);
    await ingest('game', [{ event: 'skip-other-project', severity: 'fatal' }], s.tenants.aOther);
    await ingest('game', [{ event: 'skip-other-org', severity: 'fatal' }], s.tenants.b);
    await ingest('game', [{ event: 'm3', severity: 'fatal' }, { event: 'm4', severity: 'warn' }]);
    await client.until((c) => c.events.some((e) => e.data.event === 'm4'));
    await sleep(100);
    assert.deepEqual(client.events.map((e) => e.data.event), ['m1', 'm2', 'm3', 'm4']);
    const ids = client.events.map((e) => e.lastEventId);
    assert.equal(new Set(ids).size, ids.length, 'every event has an id of its own');
    await client.close();
  });

  test('500 events ingested at once arrive complete and in order; the embedded engine reads them in batches of at most 200', async () => {
    const { hub } = s.server.tail;
    const store = hub.options.store;
    // On ClickHouse the records of this process's log bring them (relay.ts): nothing is read.
    const embedded = (await s.server.events.store.dialect()) === 'duckdb';
    const reads: number[] = [];
    hub.options.store = {
      readAfter: async (tenant, request) => {
        assert.ok(request.limit <= (embedded ? 200 : hub.options.readLimit));
        const events = await store.readAfter(tenant, request);
        reads.push(events.length);
        return events;
      },
    } satisfies Pick<EventStore, 'readAfter'>;
    try {
      const client = await open('event:bulk');
      await ingest('game', Array.from({ length: 500 }, (_, i) => ({ event: 'bulk', payload: { i } })));
      await client.until((c) => c.events.length >= 500, 10_000, '500 events');
      await sleep(100);
      assert.equal(client.events.length, 500);
      assert.deepEqual(client.events.map((e) => e.data.payload.i), Array.from({ length: 500 }, (_, i) => i));
      if (embedded) {
        assert.ok(reads.every((n) => n <= 200));
        assert.ok(reads.filter((n) => n > 0).length >= 3, `reads: ${reads.join(',')}`);
      }
      await client.close();
    } finally {
      hub.options.store = store;
    }
  });

  test('the fourth session of a token is refused; a closed one frees its slot at once; other tokens are separate', async () => {
    const token = await s.token(a, ['logs:read']);
    const clients = [await open('', token), await open('', token), await open('', token)];
    const fourth = await TailClient.open(s.baseUrl, token, '');
    assert.equal(fourth.status, 429);
    assert.equal((fourth as { body: { error: { code: string } } }).body.error.code, 'tail_session_limit_exceeded');
    assert.equal((fourth as { body: { error: { limit: number } } }).body.error.limit, 3);
    const other = await open('', await s.token(a, ['logs:read']));
    await clients[0]!.close();
    const { client: reopened, waitedMs } = await openWhenFree(s, token);
    assert.ok(waitedMs < 1_000, `slot freed after ${waitedMs} ms`);
    // the reused slot streams
    await ingest('game', [{ event: 'after-reuse' }]);
    await reopened.until((c) => c.events.some((e) => e.data.event === 'after-reuse'));
    await Promise.all([reopened, clients[1]!, clients[2]!, other].map((c) => c.close()));
  });

  test('a client killed without closing frees its slot', async () => {
    const token = await s.token(a, ['logs:read']);
    const held = [await open('', token), await open('', token)];
    const script = `
      const r = await fetch(process.argv[1] + '/query/tail', { method: 'POST', headers: { authorization: 'Bearer ' + process.argv[2], 'content-type': 'application/json' }, body: '{"q":""}' });
      console.log(r.status);
      const reader = r.body.getReader();
      for (;;) await reader.read();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, s.baseUrl, token], { stdio: ['ignore', 'pipe', 'inherit'] });
    const status = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
    assert.equal(status, '200');
    assert.equal((await TailClient.open(s.baseUrl, token, '')).status, 429);
    child.kill('SIGKILL');
    const { client, waitedMs } = await openWhenFree(s, token);
    assert.ok(waitedMs < 1_000, `slot freed after ${waitedMs} ms`);
    await Promise.all([client, ...held].map((c) => c.close()));
  });

  test('Last-Event-ID resumes after that event: nothing missed, nothing repeated', async () => {
    const q = 'event:resume*';
    const batch = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ event: `resume-${tag}`, payload: { tag, i } }));
    // another session keeps the tenant's shared feed running, so the resume hands over to it
    const bystander = await open('');
    const first = await open(q);
    await ingest('game', [...batch('A', 5), { event: 'other' }]);
    await first.until((c) => c.events.length === 5);
    const lastId = first.events[4]!.lastEventId;
    await first.close();
    await ingest('game', batch('B', 250)); // while disconnected: more than one batch
    const resumed = await open(q, a.token, lastId);
    await ingest('game', batch('C', 5));
    await resumed.until((c) => c.events.length >= 255, 10_000, '255 events');
    await sleep(100);
    const seen = resumed.events.map((e) => `${e.data.payload.tag}${e.data.payload.i}`);
    const expected = [...batch('B', 250), ...batch('C', 5)].map((e) => `${e.payload.tag}${e.payload.i}`);
    assert.deepEqual(seen, expected);
    await Promise.all([resumed.close(), bystander.close()]);
  });

  test('archived datasets are excluded', async () => {
    await ingest('retired', [{ event: 'setup' }]);
    const client = await open('');
    await ingest('game', [{ event: 'resume-here' }]);
    await ingest('retired', [{ event: 'before-archive' }]);
    await client.until((c) => c.events.some((e) => e.data.event === 'before-archive'));
    const lastId = client.events.find((e) => e.data.event === 'resume-here')!.lastEventId;
    await client.close();
    const r = await s.request('DELETE', '/datasets/retired');
    assert.equal(r.status, 200, r.text);
    // resuming before the archived event no longer yields it
    const resumed = await open('', a.token, lastId);
    await ingest('game', [{ event: 'marker-archive' }]);
    await resumed.until((c) => c.events.some((e) => e.data.event === 'marker-archive'));
    assert.deepEqual(resumed.events.map((e) => e.data.event), ['marker-archive']);
    await resumed.close();
  });

  test('events written without the ingest wake-up (another process) arrive through the poll', async () => {
    const client = await open('event:polled');
    const runtime = s.server.events;
    const dataset = await runtime.datasets.getActive(a, 'game');
    const started = Date.now();
    await runtime.store.append(a, [
      { datasetId: dataset.id, eventId: crypto.randomUUID(), clientEventId: false, ts: Date.now(), severity: 1, bytesRaw: 2, event: 'polled', actor: null, source: null, message: '', payload: '{}' },
    ]);
    await client.until((c) => c.events.length === 1, 3_000);
    assert.ok(Date.now() - started < 1_500);
    await client.close();
  });
});

describe('live tail under a burst', () => {
  let s: TestServer;
  before(async () => {
    // The poll (the fallback for a lost wake-up) at its longest: it plays no part here.
    s = await startTestServer({ env: { OPS_TAIL_HEARTBEAT_MS: '60000', OPS_TAIL_IDLE_TIMEOUT_MS: '600000', OPS_TAIL_POLL_MS: '60000' } });
    for (const tenant of [s.tenants.a, s.tenants.aOther]) {
      const r = await s.request('POST', '/datasets/game/ingest', { json: [{ event: 'setup' }], token: tenant.token });
      assert.equal(r.status, 200, r.text);
    }
  });
  after(() => s.close());

  test('20,000 events from concurrent ingests, far more than 200-event reads could bring, reach every session with a selective filter once each, in order', async () => {
    const a = s.tenants.a;
    const second = await s.token(a, ['logs:read']);
    const open = async (q: string, token: string) => opened(await TailClient.open(s.baseUrl, token, q));
    const errors = [await open('event:burst AND severity >= error', a.token), await open('event:burst AND severity >= error', a.token), await open('severity >= error', second)];
    const laneTwoFatal = await open('event:burst AND payload.lane:2 AND severity:fatal', second);
    const lanes = 4;
    const requests = 10;
    const perRequest = 500;
    const severityOf = (n: number) => (n % 10 === 0 ? 'fatal' : n % 10 === 5 ? 'error' : 'info');
    const ingest = async (tenant: TestTenant, lane: number) => {
      for (let r = 0; r < requests; r++) {
        const events = Array.from({ length: perRequest }, (_, i) => {
          const n = r * perRequest + i;
          return { event: 'burst', severity: severityOf(n), payload: { lane, n } };
        });
        const response = await s.request('POST', '/datasets/game/ingest', { json: events, token: tenant.token });
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.failed, 0, response.text);
      }
    };
    // Another project of the same organisation ingests alongside: none of its events may arrive.
    await Promise.all([...Array.from({ length: lanes }, (_, lane) => ingest(a, lane)), ingest(s.tenants.aOther, 9)]);

    const all = Array.from({ length: lanes }, (_, lane) => Array.from({ length: requests * perRequest }, (_, n) => ({ lane, n }))).flat();
    const matching = all.filter(({ n }) => severityOf(n) !== 'info');
    const check = async (client: TailClient, expected: ReadonlyArray<{ lane: number; n: number }>, what: string) => {
      await client.until((c) => c.events.length >= expected.length, 120_000, `${what}: ${expected.length} events`);
      await sleep(300);
      const seen = client.events.map((e) => e.data.payload as { lane: number; n: number });
      assert.equal(seen.length, expected.length, `${what}: nothing repeated, nothing from elsewhere`);
      assert.deepEqual(new Set(seen.map(({ lane, n }) => `${lane}.${n}`)), new Set(expected.map(({ lane, n }) => `${lane}.${n}`)), `${what}: nothing missing`);
      // Each lane's requests were answered one after the other: their events arrive in that order.
      for (let lane = 0; lane < lanes; lane++) {
        const ns = seen.filter((e) => e.lane === lane).map((e) => e.n);
        assert.ok(ns.every((n, i) => i === 0 || n > ns[i - 1]!), `${what}: lane ${lane} in order`);
      }
      const ids = client.events.map((e) => e.lastEventId);
      assert.equal(new Set(ids).size, ids.length, `${what}: every event has an id of its own`);
    };
    for (const [i, client] of errors.entries()) await check(client, matching, `session ${i + 1}`);
    await check(laneTwoFatal, matching.filter(({ lane, n }) => lane === 2 && severityOf(n) === 'fatal'), 'the lane-2 fatal session');

    // A session resumed from the middle of the burst gets the rest, once each, in order.
    const middle = errors[0]!.events[Math.floor(matching.length / 2)]!;
    const resumed = opened(await TailClient.open(s.baseUrl, second, 'event:burst AND severity >= error', { lastEventId: middle.lastEventId }));
    const rest = errors[0]!.events.slice(Math.floor(matching.length / 2) + 1).map((e) => e.data.payload as { lane: number; n: number });
    await check(resumed, rest, 'the resumed session');
    await Promise.all([...errors, laneTwoFatal, resumed].map((c) => c.close()));
  });
});

describe('live tail timings and shutdown', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_TAIL_HEARTBEAT_MS: '100', OPS_TAIL_IDLE_TIMEOUT_MS: '1500', OPS_TAIL_POLL_MS: '1000' } });
    await s.request('POST', '/datasets/game/ingest', { json: [{ event: 'setup' }] });
  });
  after(() => s.close());

  test('heartbeats arrive; the session closes when idle, heartbeats not counting; a matching event resets it', async () => {
    const idle = opened(await TailClient.open(s.baseUrl, s.tenants.a.token, 'event:keep'));
    const started = Date.now();
    await idle.until((c) => c.comments.filter((x) => x === 'heartbeat').length >= 3, 2_000, 'heartbeats');
    // non-matching events do not keep a session alive either
    const keep = setInterval(() => void s.request('POST', '/datasets/game/ingest', { json: [{ event: 'noise' }] }), 150);
    // Were heartbeats or noise counted, the session would never close and this wait would fail;
    // the bounds leave room for a busy machine (CI runs the suites side by side).
    await idle.until((c) => c.ended, 6_000, 'idle close');
    clearInterval(keep);
    const lasted = Date.now() - started;
    assert.ok(lasted >= 1_300 && lasted < 5_000, `closed after ${lasted} ms`);
    assert.match(idle.comments.at(-1)!, /^closed: no matching event for 1500 ms/);
    assert.equal(idle.events.length, 0);
    const kept = opened(await TailClient.open(s.baseUrl, s.tenants.a.token, 'event:keep'));
    const kick = setInterval(() => void s.request('POST', '/datasets/game/ingest', { json: [{ event: 'keep' }] }), 200);
    // Longer than the idle timeout; an event every 200 ms leaves 1.3 s for one to be late (a
    // ClickHouse leg at load 10 once delivered none for 700 ms).
    await sleep(2_500);
    clearInterval(kick);
    assert.equal(kept.ended, false, 'matching events keep the session open');
    assert.ok(kept.events.length >= 3);
    await kept.until((c) => c.ended, 5_000, 'idle close after the events stop');
  });

  test('shutdown ends open streams cleanly with a final comment', async () => {
    const client = opened(await TailClient.open(s.baseUrl, s.tenants.a.token, ''));
    const started = Date.now();
    await s.close();
    await client.until((c) => c.ended, 3_000, 'end');
    assert.ok(Date.now() - started < 2_500);
    assert.match(client.comments.at(-1)!, /^closed: the server is shutting down/);
    s = { ...s, close: async () => undefined };
  });
});
