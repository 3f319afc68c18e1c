/**
 * The ClickHouse engine behind the write-ahead log, on the real cluster of scripts/clickhouse.sh
 * (OPS_TEST_CLICKHOUSE_URL: the ClickHouse leg). Each test file run uses databases of its own.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@clickhouse/client';
import { v7 } from 'uuid';
import { LoggedEventStore } from '../logged-event-store.js';
import { EventStoreLockedError, EventStoreUnavailableError, matchAll, type NewEvent } from '../event-store.js';
import { encodeBatch } from '../wal/event-batch.js';
import type { Tenant } from '../../tenancy/tenant.js';
import { ClickHouseEngine } from './clickhouse-engine.js';
import { dropClickHouseDatabase, freshClickHouseUrl } from '../../test-support/engine/clickhouse-testing.js';
import { parseClickHouseUrl } from '../../config/clickhouse-url.js';
import { clickhouseEventColumns, migrations, schemaTableDdl } from './clickhouse-schema.js';
import { TcpProxy } from '../../test-support/cluster/test-services.js';
import { legs } from '../../test-support/ci.js';

const base = process.env.OPS_TEST_CLICKHOUSE_URL;
const onLeg = legs.clickhouse();

const a: Tenant = { orgId: 'ORGA', projectId: 'P1', mode: 'live' };
const b: Tenant = { orgId: 'ORGB', projectId: 'P9', mode: 'live' };
const now = Date.UTC(2026, 10, 23, 12);
const day = 86_400_000;

const ev = (ts: number, body: { event?: string; message?: string; payload?: object } = {}, extra: Partial<NewEvent> = {}): NewEvent => ({
  datasetId: 'ds_1',
  eventId: v7(),
  clientEventId: false,
  ts,
  severity: 1,
  bytesRaw: 10,
  event: body.event ?? 'e',
  actor: null,
  source: null,
  message: body.message ?? '',
  payload: JSON.stringify(body.payload ?? {}),
  ...extra,
});

const names = async (_t: Tenant, ids: readonly string[]) => new Map(ids.map((id) => [id, `name-of-${id}`]));

/** Direct SQL on the first host, for what the API does not show (row counts per seq). */
async function sql(url: string, query: string, host = parseClickHouseUrl(url).hosts[0]): Promise<Array<Record<string, unknown>>> {
  const client = createClient({ url: host, log: { level: 127 as never } });
  try {
    const result = await client.query({ query, format: 'JSONEachRow' });
    return await result.json();
  } finally {
    await client.close();
  }
}

onLeg.describe('ClickHouse engine behind the write-ahead log', () => {
  let url: string;
  let dir: string;
  let store: LoggedEventStore;
  const spread = [now - 60_000, now - 2 * day, now - 2 * day, now - 40 * day, Date.UTC(2001, 0, 1), now + 5 * 60_000];
  before(async () => {
    url = freshClickHouseUrl(base!);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-ch-'));
    store = await LoggedEventStore.open({ dir, clickhouseUrl: url, now: () => now, names });
    const events: NewEvent[] = [];
    for (let i = 0; i < 250; i++) {
      events.push(ev(spread[i % spread.length]! + Math.floor(i / spread.length), { event: `e${i}`, payload: { n: i, group: i % 3 === 0 ? 'x' : 'y', deep: { list: [i % 2, 'z'] } } }, { severity: i % 5 }));
    }
    await store.append(a, events);
    await store.append(b, [ev(now, { event: 'other-org', payload: { n: 1 } })]);
  });
  after(async () => {
    await store?.close();
    if (url) await dropClickHouseDatabase(url);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the dialect is ClickHouse', async () => {
    assert.equal(await store.dialect(), 'clickhouse');
  });

  test("the tables ClickHouse holds are the one description's (event-columns.ts), column for column", async () => {
    const { database, cluster } = parseClickHouseUrl(url);
    for (const table of cluster ? ['events_local', 'events'] : ['events']) {
      const described = await sql(url, `DESCRIBE TABLE ${database}.${table}`);
      assert.deepEqual(
        described.map((c) => [c.name, c.type]),
        clickhouseEventColumns.map((c) => [c.name, c.type]),
        table,
      );
    }
  });

  test('keyset pages, newest first, complete across time windows from next week to 2001', async () => {
    const seen: Array<{ ts: number; id: string }> = [];
    let after;
    for (let pages = 0; pages < 20; pages++) {
      const page = await store.query(a, { filter: matchAll, limit: 40, ...(after ? { after } : {}) });
      seen.push(...page.events.map((e) => ({ ts: e.ts, id: e.event_id })));
      if (!page.next) break;
      after = page.next;
    }
    assert.equal(seen.length, 250);
    assert.equal(new Set(seen.map((s) => s.id)).size, 250);
    for (let i = 1; i < seen.length; i++) {
      const [x, y] = [seen[i - 1]!, seen[i]!];
      assert.ok(x.ts > y.ts || (x.ts === y.ts && x.id > y.id), `order at ${i}`);
    }
  });

  test('filters, group by and counts see only the tenant', async () => {
    const page = await store.query(b, { filter: matchAll, limit: 100 });
    assert.deepEqual(page.events.map((e) => e.event), ['other-org']);
    assert.equal(page.events[0]!.dataset, 'name-of-ds_1');
    const groups = await store.aggregate(a, { filter: matchAll, key: { sql: 'severity', params: [] }, limit: 100 });
    assert.deepEqual(groups.map((g) => g.count), [50, 50, 50, 50, 50]);
    const counts = await store.rollupCounts(a, ['ds_1', 'ds_none'], now - day);
    assert.deepEqual([...counts], [['ds_1', 83], ['ds_none', 0]]);
    assert.deepEqual([...(await store.rollupCounts(b, ['ds_1'], now - day))], [['ds_1', 1]]);
    const filtered = await store.query(a, { filter: { where: 'event = ?', params: ['e7'] }, limit: 10 });
    assert.deepEqual(filtered.events.map((e) => e.event), ['e7']);
    const none = await store.query(b, { filter: { where: 'event = ?', params: ['e7'] }, limit: 10 });
    assert.equal(none.events.length, 0);
  });

  test("a threshold monitor's reads run on every host at a lower priority than the API's (ClickHouse pauses them while an API read runs)", async () => {
    const hosts = parseClickHouseUrl(url).hosts;
    for (const [lane, expected] of [['monitors', '2'], ['api', '1'], [undefined, '1']] as const) {
      // A read slow enough to be seen running: ~8 ms a row over 250 rows, split between the
      // shards (~1 s each; at 4 ms a shard once ended unseen while the test files beside it
      // kept both cores busy).
      const marker = `priority-${lane ?? 'default'}-${Date.now()}`;
      const read = store.aggregate(a, { filter: { where: 'sleepEachRow(0.008) = 0 AND event != ?', params: [marker] }, key: { sql: 'severity', params: [] }, limit: 100, ...(lane ? { lane } : {}) });
      const seen = new Map<string, string>();
      const deadline = Date.now() + 20_000;
      while (seen.size < hosts.length && Date.now() < deadline) {
        for (const host of hosts) {
          const running = await sql(url, `SELECT Settings.Names AS names, Settings.Values AS values FROM system.processes WHERE query LIKE '%${marker}%' AND query NOT LIKE '%system.processes%'`, host);
          for (const row of running) {
            const names = row.names as string[];
            seen.set(host!, (row.values as string[])[names.indexOf('priority')] ?? '0');
          }
        }
      }
      const groups = await read;
      assert.equal(groups.reduce((n, g) => n + g.count, 0), 250, 'the answer is the same in either lane');
      assert.deepEqual([...seen.keys()].sort(), [...hosts].sort(), `the read was seen running on every host (${lane})`);
      for (const [host, priority] of seen) assert.equal(priority, expected, `${lane ?? 'no lane'} on ${host}`);
    }
  });

  test('schema discovery reads a bounded sample of the newest events', async () => {
    const stats = await store.fieldStats(a, { datasetId: 'ds_1', sinceMs: 0, maxKeys: 100, maxSamples: 3 });
    assert.equal(stats.sampledEvents, 250);
    assert.deepEqual(stats.fields.map((f) => f.key).sort(), ['deep.list', 'group', 'n']);
    const other = await store.fieldStats(b, { datasetId: 'ds_1', sinceMs: 0, maxKeys: 100, maxSamples: 3 });
    assert.equal(other.sampledEvents, 1);
  });

  test('client event ids are stored once, per tenant', async () => {
    const id = '0190a3f0-0000-7000-8000-00000000abcd';
    const first = await store.append(a, [ev(now, { event: 'dup' }, { eventId: id, clientEventId: true })]);
    assert.equal(first.stored, 1);
    const again = await store.append(a, [ev(now, { event: 'dup' }, { eventId: id, clientEventId: true })]);
    assert.deepEqual([again.stored, again.duplicates], [0, 1]);
    // Once loaded, the engine answers the check (not the in-memory pending set).
    await store.query(a, { filter: matchAll, limit: 1 });
    const later = await store.append(a, [ev(now, { event: 'dup' }, { eventId: id, clientEventId: true })]);
    assert.deepEqual([later.stored, later.duplicates], [0, 1]);
    const otherTenant = await store.append(b, [ev(now, { event: 'dup' }, { eventId: id, clientEventId: true })]);
    assert.equal(otherTenant.stored, 1);
  });

  test('live tail reads after a position, oldest first', async () => {
    const start = await store.tailStart(b);
    await store.append(b, [ev(now, { event: 't1' }), ev(now, { event: 't2' })]);
    const events = await store.readAfter(b, { after: start, filter: { where: 'event = ?', params: ['t2'] }, limit: 10 });
    assert.deepEqual(events.map((e) => e.event), ['t2']);
  });

  test('retention deletes a dataset\'s events before a time, on every shard, and only those', async () => {
    await store.append(a, [ev(now - 400 * day, { event: 'old' }, { datasetId: 'ds_ret' }), ev(now, { event: 'new' }, { datasetId: 'ds_ret' })]);
    await store.append(b, [ev(now - 400 * day, { event: 'old-b' }, { datasetId: 'ds_ret' })]);
    assert.equal(await store.deleteBefore(a, 'ds_ret', now - day), 1);
    assert.equal(await store.deleteBefore(a, 'ds_ret', now - day), 0);
    const left = await store.query(a, { filter: { where: 'dataset_id = ?', params: ['ds_ret'] }, limit: 10 });
    assert.deepEqual(left.events.map((e) => e.event), ['new']);
    const bLeft = await store.query(b, { filter: { where: 'dataset_id = ?', params: ['ds_ret'] }, limit: 10 });
    assert.deepEqual(bLeft.events.map((e) => e.event), ['old-b']);
  });

  test('a second process cannot take the same events directory', async () => {
    // Same process: allowed (a restarted worker); another pid holding it: refused.
    fs.writeFileSync(path.join(dir, 'events.lock'), String(process.ppid));
    try {
      await assert.rejects(LoggedEventStore.open({ dir, clickhouseUrl: url, now: () => now, names }), EventStoreLockedError);
    } finally {
      fs.writeFileSync(path.join(dir, 'events.lock'), String(process.pid));
    }
  });
});

onLeg.describe('ClickHouse engine loads each record exactly once', () => {
  let url: string;
  before(() => {
    url = freshClickHouseUrl(base!);
  });
  after(async () => {
    if (url) await dropClickHouseDatabase(url);
  });

  const records = (first: number, n: number, tenant: Tenant) => {
    const events = Array.from({ length: n }, (_, i) => ev(now + first + i, { event: `r${first + i}` }));
    return { firstSeq: first, body: encodeBatch(tenant, now, events) };
  };

  test('a load whose rows landed but whose position did not is not stored twice', async () => {
    const engine = await ClickHouseEngine.open(url);
    try {
      assert.equal(await engine.loadedSeq(), 0);
      await engine.load([records(1, 100, a), records(101, 50, b)], 150);
      await engine.load([records(151, 30, a)], 180);
    } finally {
      await engine.close();
    }
    // A crash between the rows and the position: the position goes back to 150.
    const db = parseClickHouseUrl(url).database;
    await sql(url, `ALTER TABLE ${db}.event_loaders DELETE WHERE position > 150`);
    for (let i = 0; i < 100 && (await sql(url, `SELECT count() AS n FROM ${db}.event_loaders WHERE position > 150`))[0]!.n !== '0'; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const reopened = await ClickHouseEngine.open(url);
    try {
      assert.equal(await reopened.loadedSeq(), 150);
      // The log hands the records after 150 again, and more.
      await reopened.load([records(151, 30, a), records(181, 20, a)], 200);
      const [row] = await sql(url, `SELECT count() AS n, uniqExact(seq) AS u, min(seq) AS lo, max(seq) AS hi FROM ${db}.events`);
      assert.deepEqual(row, { n: '200', u: '200', lo: '1', hi: '200' });
      assert.equal(await reopened.loadedSeq(), 200);
    } finally {
      await reopened.close();
    }
  });

  test("ingesters with logs of their own: the same seqs from two logs are two events, and one log's recovery never skips the other's rows", async () => {
    const db = parseClickHouseUrl(url).database;
    const before = Number((await sql(url, `SELECT count() AS n FROM ${db}.events`))[0]!.n);
    const hostA = await ClickHouseEngine.open(url, { logId: '00000000000000aa' });
    const hostB = await ClickHouseEngine.open(url, { logId: '00000000000000bb' });
    try {
      assert.equal(await hostA.loadedSeq(), 0);
      assert.equal(await hostB.loadedSeq(), 0);
      await hostA.load([records(1, 40, a)], 40);
      await hostB.load([records(1, 60, a)], 60);
    } finally {
      await hostA.close();
      await hostB.close();
    }
    // Host A restarts after a load it cannot vouch for: it asks which of *its* seqs past 40 are stored.
    const restartedA = await ClickHouseEngine.open(url, { logId: '00000000000000aa' });
    try {
      assert.equal(await restartedA.loadedSeq(), 40);
      await restartedA.load([records(41, 30, b)], 70);
      assert.equal(await restartedA.loadedSeq(), 70);
    } finally {
      await restartedA.close();
    }
    const rows = await sql(url, `SELECT log_id, count() AS n, uniqExact(seq) AS u FROM ${db}.events WHERE log_id != '' GROUP BY log_id ORDER BY log_id`);
    assert.deepEqual(rows, [
      { log_id: '00000000000000aa', n: '70', u: '70' },
      { log_id: '00000000000000bb', n: '60', u: '60' },
    ]);
    assert.equal(Number((await sql(url, `SELECT count() AS n FROM ${db}.events`))[0]!.n), before + 130);
  });
});

onLeg.describe('ClickHouse page windows start at the tenant\'s newest event', () => {
  let url: string;
  before(() => {
    url = freshClickHouseUrl(base!);
  });
  after(async () => {
    if (url) await dropClickHouseDatabase(url);
  });

  const load = (engine: ClickHouseEngine, firstSeq: number, tsList: readonly number[]) =>
    engine.load([{ firstSeq, body: encodeBatch(a, now, tsList.map((ts) => ev(ts))) }], firstSeq + tsList.length - 1);

  test('pages stay complete and ordered when another process loads newer events than the anchor this one knows', async () => {
    const reader = await ClickHouseEngine.open(url);
    const writer = await ClickHouseEngine.open(url);
    try {
      await reader.loadedSeq();
      // Ten days old: the reader learns its anchor from this load.
      await load(reader, 1, Array.from({ length: 30 }, (_, i) => now - 10 * day + i * 60_000));
      const page = (limit: number, after?: { ts: number; event_id: string }) =>
        reader.query(a, { filter: { where: '1', params: [] }, limit, ...(after ? { after } : {}) });
      assert.equal((await page(5)).events[0]!.ts, now - 10 * day + 29 * 60_000);
      // Another process loads newer events (and some between) that the reader has not seen.
      await writer.loadedSeq();
      await load(writer, 31, [now - 3 * day, now + 3_600_000, now - 10 * day + 90_000]);
      const seen: number[] = [];
      let after: { ts: number; event_id: string } | undefined;
      for (let i = 0; i < 20; i++) {
        const { events, more } = await page(4, after);
        seen.push(...events.map((e) => e.ts));
        if (!more) break;
        const last = events.at(-1)!;
        after = { ts: last.ts, event_id: last.event_id };
      }
      assert.equal(seen.length, 33);
      assert.deepEqual(seen, [...seen].sort((x, y) => y - x));
      assert.equal(seen[0], now + 3_600_000);
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});

onLeg.describe('ClickHouse down and back', () => {
  let url: string;
  let direct: string;
  let dir: string;
  let proxies: TcpProxy[] = [];
  let store: LoggedEventStore | undefined;
  before(async () => {
    direct = freshClickHouseUrl(base!);
    const target = parseClickHouseUrl(direct);
    // Every host behind a proxy this test can cut.
    proxies = await Promise.all(target.hosts.map((h) => TcpProxy.start({ host: new URL(h).hostname, port: Number(new URL(h).port) })));
    const hosts = proxies.map((p) => `127.0.0.1:${p.port}`).join(',');
    url = `clickhouse://${hosts}/${target.database}${target.cluster ? `?cluster=${target.cluster}&timeout_ms=2000` : '?timeout_ms=2000'}`;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-ch-down-'));
    store = await LoggedEventStore.open({ dir, clickhouseUrl: url, now: () => now, names, readWaitMs: 2_000 });
  });
  after(async () => {
    for (const p of proxies) await p.up();
    await store?.close();
    for (const p of proxies) await p.down();
    if (direct) await dropClickHouseDatabase(direct);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('appends stay acknowledged while ClickHouse is down; reads answer 503 and recover by themselves', async () => {
    await store!.append(a, [ev(now, { event: 'before' })]);
    assert.equal((await store!.query(a, { filter: matchAll, limit: 10 })).events.length, 1);
    await proxies[proxies.length - 1]!.down();
    const during = await store!.append(a, [ev(now, { event: 'during' })]);
    assert.equal(during.stored, 1);
    await assert.rejects(store!.query(a, { filter: matchAll, limit: 10 }), (error: Error) => error instanceof EventStoreUnavailableError || error.name === 'EventStoreBehindError');
    for (const p of proxies) await p.up();
    let events: string[] = [];
    for (let i = 0; i < 80 && events.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 250));
      events = await store!.query(a, { filter: matchAll, limit: 10 }).then((p) => p.events.map((e) => e.event), () => []);
    }
    assert.deepEqual(events.sort(), ['before', 'during']);
  });
});

onLeg.describe('ClickHouse tables from before log ids (migration 1 only)', () => {
  let url: string;
  before(() => {
    url = freshClickHouseUrl(base!);
  });
  after(async () => {
    if (url) await dropClickHouseDatabase(url);
  });

  test("are upgraded on every host: the single log's rows and position stay its own (log id '')", async () => {
    const target = parseClickHouseUrl(url);
    const layout = { database: target.database, cluster: target.cluster };
    for (const host of target.hosts) {
      const client = createClient({ url: host, log: { level: 127 as never } });
      try {
        await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${target.database}` });
        await client.command({ query: schemaTableDdl(target.database) });
        for (const statement of migrations[0]!.statements(layout)) await client.command({ query: statement });
        await client.command({ query: `INSERT INTO ${target.database}.ops_schema (version) VALUES (1)` });
      } finally {
        await client.close();
      }
    }
    const v1Columns = clickhouseEventColumns.filter((c) => !c.since);
    const first = createClient({ url: target.hosts[0], log: { level: 127 as never } });
    await first.command({ query: `INSERT INTO ${target.database}.event_loader (position) VALUES (7)` }).finally(() => first.close());
    const legacy = await ClickHouseEngine.open(url, { logId: '' });
    try {
      assert.equal(await legacy.loadedSeq(), 7, "the single log's position carries over");
      await legacy.load([{ firstSeq: 8, body: encodeBatch(a, now, [ev(now)]) }], 8);
      assert.equal(await legacy.loadedSeq(), 8);
    } finally {
      await legacy.close();
    }
    for (const table of target.cluster ? ['events_local', 'events'] : ['events']) {
      const described = await sql(url, `DESCRIBE TABLE ${target.database}.${table}`);
      assert.deepEqual(described.map((c) => c.name), clickhouseEventColumns.map((c) => c.name), table);
      assert.ok(v1Columns.length < clickhouseEventColumns.length);
    }
    assert.deepEqual(await sql(url, `SELECT log_id, seq FROM ${target.database}.events`), [{ log_id: '', seq: '8' }]);
  });
});
