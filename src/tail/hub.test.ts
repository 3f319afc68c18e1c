import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { StoredEvent } from '../shared/event-record.js';
import type { TailRequest } from '../engine/event-store.js';
import type { Tenant } from '../tenancy/tenant.js';
import { defaultHubLimits, TailHub, type TailHubOptions } from './hub.js';
import { sseHeaders } from './sse.js';
import { TailClient } from '../test-support/tail/test-client.js';
import { covers, encodePosition, parsePosition, singleLog, type TailPosition } from '../engine/tail-position.js';
import { encodeBatch } from '../engine/wal/event-batch.js';
import type { TailRecord } from '../engine/tail-record.js';

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
  /** Events the reads returned, all told. */
  readEvents = 0;
  private readonly lastOf = new Map<string, number>();
  /** Per log, the seq of this tenant's last event (what a record's `prev` chains to). */
  private readonly tenantLast = new Map<string, number>();
  /** How often a record's chain starts over (`prev` the log's position: a reader behind it reads). */
  chainRestarts = 0.1;
  constructor(private readonly logs: readonly string[] = ['']) {}

  /**
   * `count` events of `log` as one write-ahead log record (tail-record.ts), after other tenants'
   * events now and then (seqs the tenant does not see); its `prev` is now and then the log's
   * position rather than the tenant's last event (a chain started over), as LoggedEventStore's may be.
   */
  appendRecord(log: string, count: number): TailRecord {
    if (Math.random() < 0.3) this.lastOf.set(log, (this.lastOf.get(log) ?? 0) + 1 + Math.floor(Math.random() * 5));
    const firstSeq = (this.lastOf.get(log) ?? 0) + 1;
    const prev = Math.random() < this.chainRestarts ? firstSeq - 1 : (this.tenantLast.get(log) ?? 0);
    const ingestedAt = this.events.length + 1;
    const written = Array.from({ length: count }, (_, k) => {
      const n = this.events.length + 1;
      const event: StoredEvent = { seq: firstSeq + k, log, event_id: eventId(n), ts: n, ingested_at: ingestedAt, dataset: 'd', severity: 1, event: 'x', actor: null, source: null, message: '', payloadJson: '{}', bytes_raw: 1 };
      this.events.push(event);
      return { datasetId: 'd', eventId: event.event_id, clientEventId: false, ts: n, severity: 1, bytesRaw: 1, event: 'x', actor: null, source: null, message: '', payload: '{}' };
    });
    this.lastOf.set(log, firstSeq + count - 1);
    this.tenantLast.set(log, firstSeq + count - 1);
    return { tenant, log, firstSeq, count, prev, body: encodeBatch(tenant, ingestedAt, written) };
  }

  /** Records of `count` events in all, each of a random log and size. */
  appendRecords(count: number): TailRecord[] {
    const records: TailRecord[] = [];
    for (let left = count; left > 0; ) {
      const n = Math.min(left, 1 + Math.floor(Math.random() * 30));
      records.push(this.appendRecord(this.logs[Math.floor(Math.random() * this.logs.length)]!, n));
      left -= n;
    }
    return records;
  }

  append(count: number, payload: Record<string, unknown> = {}): void {
    for (let i = 0; i < count; i++) {
      const log = this.logs[Math.floor(Math.random() * this.logs.length)]!;
      const seq = (this.lastOf.get(log) ?? 0) + 1;
      this.lastOf.set(log, seq);
      const n = this.events.length + 1;
      this.events.push({ seq, ...(log ? { log } : {}), event_id: eventId(n), ts: n, ingested_at: n, dataset: 'd', severity: 1, event: 'x', actor: null, source: null, message: '', payloadJson: JSON.stringify(payload), bytes_raw: 1 });
    }
  }
  /** After every event so far; every log named, as a store's tailStart names the logs being written. */
  start(): TailPosition {
    if (this.logs.length === 1 && this.logs[0] === '') return singleLog(this.events.length);
    return { logs: Object.fromEntries(this.logs.map((log) => [log, this.lastOf.get(log) ?? 0])), since: this.events.length + 1 };
  }
  /** The position right after the `n`th event (what a client that received it would resume from). */
  positionAfter(n: number): TailPosition {
    const logs: Record<string, number> = {};
    for (const e of this.events.slice(0, n)) logs[e.log ?? ''] = e.seq;
    return this.logs.length === 1 && this.logs[0] === '' ? singleLog(n) : { logs, since: 0 };
  }
  async readAfter(_tenant: Tenant, request: TailRequest): Promise<StoredEvent[]> {
    this.limits.push(request.limit);
    // What the store holds when the read starts: events appended while it runs are not in it.
    const events = this.events.filter((e) => !covers(request.after, e)).slice(0, request.limit);
    await sleep(Math.random() * 4);
    this.readEvents += events.length;
    // Copies, as a real store's reads are: the hub names a record's events in place.
    return events.map((e) => ({ ...e }));
  }
}

/** The n-th event's id, as a UUID (a record body holds 36 characters). */
const eventId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A bare HTTP server streaming from a hub: `Last-Event-ID` is the start position. */
async function serve(options: Partial<TailHubOptions>, store: FakeStore) {
  const hub = new TailHub({
    ...defaultHubLimits,
    store,
    activeDatasets: async () => new Map([['d', 'd']]),
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

describe('tail hub, records of three logs (ClickHouse: relay.ts)', () => {
  const logs = ['00000000000000aa', '00000000000000bb', '00000000000000cc'];
  // The poll at its longest: what arrives comes from the records, or from the reads a record that does not follow the cursor makes.
  const noPoll = { maxSessionsPerToken: 100, pollMs: 600_000 };

  test('records that follow each other are handed on without reading the store', async () => {
    const store = new FakeStore(logs);
    store.chainRestarts = 0;
    const srv = await serve(noPoll, store);
    try {
      const clients: TailClient[] = [];
      for (let i = 0; i < 3; i++) {
        const result = await TailClient.open(srv.url, 't', '');
        assert.equal(result.status, 200);
        clients.push((result as { client: TailClient }).client);
      }
      await sleep(50);
      for (let round = 0; round < 20; round++) {
        for (const record of store.appendRecords(Math.floor(Math.random() * 400))) srv.hub.offer(record);
        await sleep(Math.random() * 5);
      }
      for (const client of clients) {
        await client.until((c) => c.events.length >= store.events.length, 10_000, `${store.events.length} events`);
        assert.deepEqual(client.events.map((e) => e.data.event_id), store.events.map((e) => e.event_id));
      }
      assert.equal(store.readEvents, 0, 'no event was read from the store');
      await Promise.all(clients.map((c) => c.close()));
    } finally {
      await srv.close();
    }
  });

  for (const maxQueuedEvents of [defaultHubLimits.maxQueuedEvents, 40]) {
  test(`records lost, late, repeated or without their events, at most ${maxQueuedEvents} waiting: sessions opened at random positions get each later event once, each log in order`, async () => {
    const store = new FakeStore(logs);
    const srv = await serve({ ...noPoll, maxQueuedEvents }, store);
    try {
      const sessions: Array<{ start: number; client: TailClient }> = [];
      const opening: Array<Promise<void>> = [];
      let late: TailRecord[] = [];
      for (let round = 0; round < 30; round++) {
        const records = store.appendRecords(Math.floor(Math.random() * 300));
        const now = late;
        late = [];
        for (const record of records) {
          const fate = Math.random();
          if (fate < 0.1) continue; // lost on the bus
          if (fate < 0.2) late.push(record);
          else if (fate < 0.3) now.push({ ...record, body: undefined }); // sent without its events
          else if (fate < 0.4) now.push(record, record);
          else now.push(record);
        }
        for (const record of now) srv.hub.offer(record);
        // Opened while the next rounds' records come: a session catches up as the feed moves on.
        const start = Math.floor(Math.random() * store.events.length);
        opening.push(TailClient.open(srv.url, 't', '', { lastEventId: encodePosition(store.positionAfter(start)) }).then((result) => {
          assert.equal(result.status, 200);
          sessions.push({ start, client: (result as { client: TailClient }).client });
        }));
        await sleep(Math.random() * 5);
      }
      await Promise.all(opening);
      for (const record of late) srv.hub.offer(record);
      // A last record of each log, delivered: a gap before it shows.
      for (const log of logs) srv.hub.offer(store.appendRecord(log, 3));
      const total = store.events.length;
      for (const { start, client } of sessions) {
        const expected = store.events.slice(start);
        await client.until((c) => c.events.length >= total - start, 10_000, `${total - start} events from ${start}`);
        await sleep(20);
        const seen = client.events.map((e) => e.data.event_id as string);
        assert.equal(seen.length, expected.length, 'nothing repeated');
        assert.deepEqual(new Set(seen), new Set(expected.map((e) => e.event_id)), 'nothing missing');
        const logOf = new Map(store.events.map((e) => [e.event_id, e.log]));
        for (const log of logs) {
          assert.deepEqual(
            seen.filter((id) => logOf.get(id) === log),
            expected.filter((e) => e.log === log).map((e) => e.event_id),
            `log ${log} in order`,
          );
        }
      }
      assert.ok(store.readEvents < total * sessions.length, 'records brought some of the events');
      await Promise.all(sessions.map((s) => s.client.close()));
    } finally {
      await srv.close();
    }
  });
  }
});

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
