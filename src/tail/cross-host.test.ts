import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { connect } from 'nats';
import { startTestServer, type TestServer, type TestTenant } from '../test-support/test-server.js';
import { missingServices, services, sharedDatabase } from '../test-support/cluster/test-services.js';
import { legs, needs } from '../test-support/ci.js';
import { dropClickHouseDatabase, freshClickHouseUrl } from '../test-support/engine/clickhouse-testing.js';
import { encodeBatch } from '../engine/wal/event-batch.js';
import { parsePosition } from '../engine/tail-position.js';
import { tenantOnly } from '../tenancy/tenant.js';
import { recordMac, relayKey } from './relay.js';
import { TailClient } from '../test-support/tail/test-client.js';

/**
 * Live tail across two API processes on ClickHouse (relay.ts): two real servers in this test
 * process, each an ingester with a write-ahead log of its own, on one ClickHouse database, one
 * PostgreSQL database (the metadata), one NATS and one OPS_SECRET_KEY. The poll is at its
 * longest, so what reaches a session came by a record or by the read a record started.
 */
const base = process.env.OPS_TEST_CLICKHOUSE_URL;
const onClickHouse = legs.clickhouse();
const required = base ? needs(await missingServices()) : {};

const secret = crypto.randomBytes(32).toString('base64');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

onClickHouse.describe('live tail across two API processes on ClickHouse', required, () => {
  let database: Awaited<ReturnType<typeof sharedDatabase>>;
  let clickhouse: string;
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    database = await sharedDatabase();
    clickhouse = freshClickHouseUrl(base!);
    const env = {
      OPS_DATABASE_URL: database.url,
      OPS_EVENTS_URL: clickhouse,
      OPS_SECRET_KEY: secret,
      OPS_NATS_URL: `nats://${services.nats.host}:${services.nats.port}`,
      OPS_TAIL_POLL_MS: '60000',
      OPS_TAIL_HEARTBEAT_MS: '60000',
      OPS_TAIL_IDLE_TIMEOUT_MS: '600000',
    };
    a = await startTestServer({ env });
    b = await startTestServer({ env });
    for (const tenant of [a.tenants.a, a.tenants.aOther]) {
      const r = await a.request('POST', '/datasets/game/ingest', { json: [{ event: 'setup' }], token: tenant.token });
      assert.equal(r.status, 200, r.text);
    }
  });
  after(async () => {
    await a?.close();
    await b?.close();
    if (clickhouse) await dropClickHouseDatabase(clickhouse);
    await database?.drop();
  });

  const open = async (s: TestServer, token: string, q: string) => {
    const result = await TailClient.open(s.baseUrl, token, q);
    assert.equal(result.status, 200, 'body' in result ? JSON.stringify(result.body) : '');
    return (result as { client: TailClient }).client;
  };
  const ingest = async (s: TestServer, tenant: TestTenant, events: unknown[]) => {
    const r = await s.request('POST', '/datasets/game/ingest', { json: events, token: tenant.token });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.failed, 0, r.text);
  };

  test("sessions on both hosts get both hosts' matching events once each, each writer's in order", async () => {
    const tenant = a.tenants.a;
    const q = 'event:xhost AND severity >= error';
    const sessions = [
      { where: 'A', client: await open(a, tenant.token, q) },
      { where: 'A', client: await open(a, tenant.token, q) },
      { where: 'B', client: await open(b, tenant.token, q) },
    ];
    const severityOf = (n: number) => (n % 10 === 0 ? 'fatal' : n % 10 === 5 ? 'error' : 'info');
    const writers = [
      { host: a, name: 'A0' },
      { host: a, name: 'A1' },
      { host: b, name: 'B0' },
      { host: b, name: 'B1' },
    ];
    const requests = 10;
    const perRequest = 400;
    await Promise.all(
      writers.map(async ({ host, name }) => {
        for (let r = 0; r < requests; r++) {
          await ingest(
            host,
            tenant,
            Array.from({ length: perRequest }, (_, i) => {
              const n = r * perRequest + i;
              return { event: 'xhost', severity: severityOf(n), payload: { writer: name, n } };
            }),
          );
        }
      }),
    );
    const expected = writers.flatMap(({ name }) => Array.from({ length: requests * perRequest }, (_, n) => n).filter((n) => severityOf(n) !== 'info').map((n) => `${name}.${n}`));
    for (const { where, client } of sessions) {
      const what = `a session on ${where}`;
      await client.until((c) => c.events.length >= expected.length, 120_000, `${what}: ${expected.length} events`);
      await sleep(300);
      const seen = client.events.map((e) => e.data.payload as { writer: string; n: number });
      assert.equal(seen.length, expected.length, `${what}: nothing repeated`);
      assert.deepEqual(new Set(seen.map((e) => `${e.writer}.${e.n}`)), new Set(expected), `${what}: nothing missing`);
      for (const { name } of writers) {
        const ns = seen.filter((e) => e.writer === name).map((e) => e.n);
        assert.ok(ns.every((n, i) => i === 0 || n > ns[i - 1]!), `${what}: ${name}'s events in order`);
      }
    }
    await Promise.all(sessions.map(({ client }) => client.close()));
  });

  test("a record on the bus brings its events only under the installation's key; without it the store is read", async () => {
    const tenant = a.tenants.aOther;
    const session = await open(a, tenant.token, '');
    await ingest(b, tenant, [{ event: 'first' }]);
    await session.until((c) => c.events.some((e) => e.data.event === 'first'), 30_000, "B's first event on A");
    const logB = fs.readFileSync(path.join(b.dataDir, 'events', 'log-id'), 'utf8').trim();
    const seqOnB = () => parsePosition(session.events.at(-1)!.lastEventId)!.logs[logB]!;
    const dataset = await b.server.events.datasets.getActive(tenant, 'game');
    const forge = (event: string, mac: (body: Buffer, record: { log: string; firstSeq: number; count: number; prev: number }) => string) => {
      const at = seqOnB();
      const body = encodeBatch(tenantOnly(tenant), Date.now(), [
        { datasetId: dataset.id, eventId: crypto.randomUUID(), clientEventId: false, ts: Date.now(), severity: 1, bytesRaw: 2, event, actor: null, source: null, message: '', payload: '{}' },
      ]);
      const record = { log: logB, firstSeq: at + 1, count: 1, prev: at };
      return JSON.stringify({ tenant: tenantOnly(tenant), lastSeq: at + 1, record: { ...record, body: body.toString('base64'), mac: mac(body, record) } });
    };
    const nats = await connect({ servers: `nats://${services.nats.host}:${services.nats.port}` });
    try {
      // Another installation's key (or none): the record only makes A read ClickHouse, which has no such event.
      nats.publish('opsplatform.tail.wake', forge('forged', (body, record) => recordMac(relayKey(crypto.randomBytes(32)), tenant, record, body)));
      await nats.flush();
      await ingest(b, tenant, [{ event: 'second' }]);
      await session.until((c) => c.events.some((e) => e.data.event === 'second'), 30_000, "B's second event on A");
      assert.deepEqual(session.events.map((e) => e.data.event), ['first', 'second']);
      assert.ok(a.logs.some((line) => line.includes('has no valid MAC')), 'the refused record is logged');

      // Signed with this installation's key, a record is handed on as it is: its event never went through ClickHouse.
      nats.publish('opsplatform.tail.wake', forge('signed', (body, record) => recordMac(relayKey(Buffer.from(secret, 'utf8')), tenant, record, body)));
      await nats.flush();
      await session.until((c) => c.events.some((e) => e.data.event === 'signed'), 30_000, 'the signed record on A');
      assert.deepEqual(session.events.map((e) => e.data.event), ['first', 'second', 'signed']);
    } finally {
      await nats.close();
      await session.close();
    }
  });
});
