import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { StoredEvent } from '../engine/event-record.js';
import type { TailRequest } from '../engine/event-store.js';
import type { Tenant } from '../tenancy/tenant.js';
import { defaultHubLimits, TailHub, type TailHubOptions } from './hub.js';
import { sseHeaders } from './sse.js';
import { TailClient } from './test-client.js';
import { covers, encodePosition, parsePosition, singleLog, type TailPosition } from '../engine/tail-position.js';

const tenant: Tenant = { orgId: 'o', projectId: 'p', mode: 'live' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * A position without the logs it has read nothing of: a session started at the very beginning of
 * interleaved logs resumes from `0`, which reads back as the single log '' at 0 — the same place.
 */
const withoutEmptyLogs = (position: TailPosition | undefined) =>
  position && { ...position, logs: Object.fromEntries(Object.entries(position.logs).filter(([, seq]) => seq > 0)) };

/**
 * An in-memory store whose reads take a random few milliseconds, to shuffle the interleavings.
 * With `logs`, events come from that many write-ahead logs interleaved (ClickHouse's ingesters),
 * each numbering its own; reads return them in arrival order, as ClickHouse's (ingested_at, log, seq).
 */
class FakeStore {
  readonly events: StoredEvent[] = [];
  readonly limits: number[] = [];
  private readonly lastOf = new Map<string, number>();
  constructor(private readonly logs: readonly string[] = ['']) {}
  append(count: number, payload: Record<string, unknown> = {}): void {
    for (let i = 0; i < count; i++) {
      const log = this.logs[Math.floor(Math.random() * this.logs.length)]!;
      const seq = (this.lastOf.get(log) ?? 0) + 1;
      this.lastOf.set(log, seq);
      const n = this.events.length + 1;
      this.events.push({ seq, ...(log ? { log } : {}), event_id: `e${n}`, ts: n, ingested_at: n, dataset: 'd', severity: 1, event: 'x', actor: null, source: null, message: '', payloadJson: JSON.stringify(payload), bytes_raw: 1 });
    }
  }
  /** After every event so far. */
  start(): TailPosition {
    if (this.logs.length === 1 && this.logs[0] === '') return singleLog(this.events.length);
    return { logs: Object.fromEntries(this.lastOf), since: this.events.length + 1 };
  }
  /** The position right after the `n`th event (what a client that received it would resume from). */
  positionAfter(n: number): TailPosition {
    const logs: Record<string, number> = {};
    for (const e of this.events.slice(0, n)) logs[e.log ?? ''] = e.seq;
    return this.logs.length === 1 && this.logs[0] === '' ? singleLog(n) : { logs, since: 0 };
  }
  async readAfter(_tenant: Tenant, request: TailRequest): Promise<StoredEvent[]> {
    this.limits.push(request.limit);
    await sleep(Math.random() * 4);
    return this.events.filter((e) => !covers(request.after, e)).slice(0, request.limit);
  }
}

/** A bare HTTP server streaming from a hub: `Last-Event-ID` is the start position. */
async function serve(options: Partial<TailHubOptions>, store: FakeStore) {
  const hub = new TailHub({
    ...defaultHubLimits,
    store,
    activeDatasets: async () => new Set(['d']),
    pollMs: 1_000,
    heartbeatMs: 60_000,
    idleTimeoutMs: 60_000,
    log: () => undefined,
    ...options,
  });
  const server = http.createServer((req, res) => {
    req.resume();
    const slot = hub.reserve('token');
    if (!slot) {
      res.writeHead(429).end('{}');
      return;
    }
    res.writeHead(200, sseHeaders);
    res.flushHeaders();
    const resume = req.headers['last-event-id'];
    hub.open({ tenant, predicate: () => true, after: resume ? parsePosition(String(resume))! : store.start(), res, slot });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    hub,
    port,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await hub.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

for (const logs of [[''], ['00000000000000aa', '00000000000000bb', '00000000000000cc']]) {
  describe(`tail hub, ${logs.length === 1 ? 'one log' : 'three logs interleaved (ClickHouse ingesters)'}`, () => {
    let store: FakeStore;
    let srv: Awaited<ReturnType<typeof serve>>;
    before(async () => {
      store = new FakeStore(logs);
      srv = await serve({ maxSessionsPerToken: 100, pollMs: 20 }, store);
    });
    after(() => srv.close());

    test('sessions opened at random positions while events keep arriving get each later event once, in order', async () => {
      store.append(50);
      const sessions: Array<{ start: number; client: TailClient }> = [];
      for (let round = 0; round < 20; round++) {
        store.append(Math.floor(Math.random() * 300));
        srv.hub.wake(tenant);
        const start = Math.floor(Math.random() * store.events.length);
        const result = await TailClient.open(srv.url, 't', '', { lastEventId: encodePosition(store.positionAfter(start)) });
        assert.equal(result.status, 200);
        sessions.push({ start, client: (result as { client: TailClient }).client });
        if (round % 3 === 0) await sleep(Math.random() * 10);
      }
      store.append(10);
      srv.hub.wake(tenant);
      const total = store.events.length;
      for (const { start, client } of sessions) {
        await client.until((c) => c.events.length >= total - start, 10_000, `${total - start} events from ${start}`);
        assert.deepEqual(
          client.events.map((e) => e.data.event_id),
          store.events.slice(start).map((e) => e.event_id),
        );
        // Each id resumes right after its event.
        const k = Math.floor(Math.random() * client.events.length);
        assert.deepEqual(withoutEmptyLogs(parsePosition(client.events[k]!.lastEventId)), withoutEmptyLogs(parsePosition(encodePosition(store.positionAfter(start + k + 1)))));
      }
      assert.ok(store.limits.every((l) => l <= 200));
      await Promise.all(sessions.map((s) => s.client.close()));
    });
  });
}

describe('tail back-pressure', () => {
  test('a client that does not read is dropped with a final comment and its slot freed', async () => {
    const store = new FakeStore();
    const srv = await serve({ maxBufferedBytes: 64 * 1024, flushGraceMs: 5_000 }, store);
    try {
      const socket = net.connect(srv.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`POST /query/tail HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n{"q":""}`);
      socket.pause(); // never reads
      for (let i = 0; i < 50 && srv.hub.size === 0; i++) await sleep(10);
      assert.equal(srv.hub.size, 1);
      const big = { blob: 'x'.repeat(10_000) };
      let pushed = 0;
      while (srv.hub.size > 0 && pushed < 200_000_000) {
        store.append(100, big);
        pushed += 100 * 10_000;
        srv.hub.wake(tenant);
        await sleep(20);
      }
      assert.equal(srv.hub.size, 0, `still open after ${pushed} bytes`);
      // the slot is free again
      const slots = [srv.hub.reserve('token'), srv.hub.reserve('token'), srv.hub.reserve('token')];
      assert.ok(slots.every(Boolean));
      slots.forEach((s) => s!.release());
      // reading now, the client finds the reason at the end
      let text = '';
      socket.setEncoding('utf8');
      const ended = new Promise<void>((resolve) =>
        socket.on('data', (chunk: string) => {
          text = (text + chunk).slice(-2_000);
          if (text.endsWith('\r\n0\r\n\r\n')) resolve(); // the last chunk of the response
        }),
      );
      socket.resume();
      await ended;
      assert.match(text, /: closed: the client is not reading \(more than 65536 bytes unread\); reconnect with Last-Event-ID to resume\n\n\r\n0\r\n\r\n$/);
      socket.destroy();
    } finally {
      await srv.close();
    }
  });
});
