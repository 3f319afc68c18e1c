import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventsNodeProcess, exited, freePort, serveProcess } from '../test-support/test-process.js';
import { missingServices, services, TcpProxy } from '../test-support/cluster/test-services.js';
import { eventually, startReceiver } from '../test-support/notifications/test-receiver.js';
import { call, processStore } from '../test-support/notifications/test-processes.js';
import type { NotificationBody } from '../test-support/monitors/test-monitors.js';
import { needs } from '../test-support/ci.js';

/**
 * Monitors on several API hosts (DECISIONS.md §18: each monitor evaluated by one
 * process per interval, each notification sent by one, a dead host's monitors handed on within
 * 2 × `every`). Real `opsctl serve` processes over one metadata store and one events node, as
 * on separate hosts: on the PostgreSQL leg (OPS_TEST_DATABASE_URL) each has a data directory of
 * its own and they share PostgreSQL, Redis and NATS (skipped when those are not reachable); on
 * SQLite they share the data directory's metadata file, as `serve --workers` does.
 *
 * Host A reaches the events node through a TCP proxy the test can stall: a stalled A that has
 * taken a monitor's lease is a process in the middle of an evaluation for as long as the test
 * wants, so the kill -9 and the late return happen exactly there.
 */
const onPostgres = Boolean(process.env.OPS_TEST_DATABASE_URL);
const missing = onPostgres ? await missingServices() : false;
const every = 60_000;
const secret = crypto.randomBytes(32).toString('base64');

type Body = NotificationBody;

async function installation() {
  const store = await processStore('ops-monitors-hosts-');
  const shared: Record<string, string> = { ...store.env, OPS_SECRET_KEY: secret };
  if (onPostgres) {
    shared.OPS_REDIS_URL = `redis://${services.redis.host}:${services.redis.port}/?keyPrefix=ops-mon-${crypto.randomBytes(6).toString('hex')}:`;
    shared.OPS_NATS_URL = `nats://${services.nats.host}:${services.nats.port}`;
  }
  const nodePort = await freePort();
  // The lease test freezes a host for a minute or more with an answer of the events node unread in
  // its socket: the node must not close that connection as idle meanwhile (its default, 72 s, is
  // at the edge of a minute's lease plus the other host's takeover on a loaded machine).
  const children: ChildProcess[] = [await eventsNodeProcess(store.dataDir, nodePort, { ...shared, OPS_KEEPALIVE_TIMEOUT_MS: '600000' })];
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: nodePort });
  const dirs: string[] = [];
  const ctx = await store.open();
  return {
    store,
    db: ctx.metadata.db,
    proxy,
    /** A host: its own data directory on PostgreSQL (the shared one on SQLite); events directly or through the proxy. */
    async host(options: { viaProxy?: boolean } = {}) {
      const dir = onPostgres ? fs.mkdtempSync(path.join(os.tmpdir(), 'ops-monitors-host-')) : store.dataDir;
      if (onPostgres) dirs.push(dir);
      const port = await freePort();
      const logs: string[] = [];
      const child = await serveProcess(dir, port, { ...shared, OPS_EVENTS_URL: `http://127.0.0.1:${options.viaProxy ? proxy.port : nodePort}` }, logs);
      children.push(child);
      const api = (method: string, urlPath: string, json?: unknown) => call(port, store.token, method, urlPath, json);
      return { port, child, logs, api };
    },
    close: async () => {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(children.map(exited));
      await proxy.down();
      await ctx.close();
      await store.drop();
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const bodiesOf = (receiver: Awaited<ReturnType<typeof startReceiver>>) => receiver.received.map((r) => JSON.parse(r.body) as Body);

// Concurrently: each has an installation of its own, and the two lease tests spend most of their minute waiting.
describe('monitors on several hosts', { ...needs(missing), concurrency: true }, () => {
  test('two hosts: each threshold firing and each matched event is notified once across them', { timeout: 240_000 }, async () => {
    const s = await installation();
    const receiver = await startReceiver([{ status: 200 }]);
    try {
      const a = await s.host();
      const b = await s.host();
      const channel = await a.api('POST', '/channels', { name: 'hook', kind: 'webhook', url: receiver.url });
      assert.equal(channel.status, 201, channel.text);
      const match = await b.api('POST', '/monitors', { name: 'flags', kind: 'match', q: 'event:flag', channel_ids: [channel.body.id], group_window: '1s' });
      assert.equal(match.status, 201, match.text);
      // Matches ingested on both hosts, alternately.
      for (let i = 0; i < 10; i++) {
        const host = i % 2 ? a : b;
        assert.equal((await host.api('POST', '/datasets/app/ingest', [{ event: 'flag', message: `flag-${i}` }])).status, 200);
      }
      const now = Date.now();
      const errors = ['eu-1', 'us-1'].flatMap((source) => Array.from({ length: 3 }, () => ({ ts: new Date(now - 1_000).toISOString(), event: 'err', source })));
      assert.equal((await a.api('POST', '/datasets/app/ingest', errors)).status, 200);
      for (let i = 0; i < 4; i++) {
        const host = i % 2 ? a : b;
        const res = await host.api('POST', '/monitors', { name: `t${i}`, kind: 'threshold', q: 'event:err stats count() by source', window: '5m', condition: { op: '>', value: 2 }, channel_ids: [channel.body.id] });
        assert.equal(res.status, 201, res.text);
      }
      await eventually(
        async () => bodiesOf(receiver),
        (list) => list.filter((x) => x.monitor.kind === 'threshold').length >= 8 && list.filter((x) => x.monitor.kind === 'match').reduce((n, x) => n + x.events_total, 0) >= 10,
        90_000,
      );
      await new Promise((r) => setTimeout(r, 7_000)); // room for a duplicate to show up
      const all = bodiesOf(receiver);
      const ids = receiver.received.map((r) => String(r.headers['x-ops-delivery-id']));
      assert.equal(new Set(ids).size, ids.length, 'no notification sent twice');
      const groups = all.filter((x) => x.monitor.kind === 'threshold').map((x) => `${x.monitor.id} ${JSON.stringify(x.group)}`);
      assert.equal(groups.length, 8);
      assert.equal(new Set(groups).size, 8, 'each monitor and source notified once');
      const matched = all.filter((x) => x.monitor.kind === 'match');
      assert.equal(matched.reduce((n, x) => n + x.events_total, 0), 10);
      const messages = matched.flatMap((x) => x.events.map((e) => e.message));
      assert.equal(new Set(messages).size, messages.length);

      // status.last_match_at is the metadata store's: both hosts answer the latest match of
      // either, as notified (each host matched its own events, in its own memory).
      const statusOn = async (host: typeof a, id: string) => {
        const res = await host.api('GET', `/monitors/${id}`);
        assert.equal(res.status, 200, res.text);
        return res.body.status as { last_match_at: string | null };
      };
      const latest = matched.flatMap((x) => (x.events as Array<{ ingested_at: string }>).map((e) => e.ingested_at)).sort().at(-1);
      for (const host of [a, b]) assert.equal((await statusOn(host, match.body.id)).last_match_at, latest);
      // A threshold monitor's: the evaluation that fired it or a later one whose condition held
      // (they go on every minute); the same on both hosts once no evaluation lands between the reads.
      for (const id of new Set(all.filter((x) => x.monitor.kind === 'threshold').map((x) => x.monitor.id))) {
        const fired = all.find((x) => x.monitor.id === id)! as unknown as { window: { to: string } };
        const [onA, onB] = await eventually(
          () => Promise.all([statusOn(a, id), statusOn(b, id)]),
          ([x, y]) => x.last_match_at === y.last_match_at,
        );
        assert.ok(onA.last_match_at && onB.last_match_at && onA.last_match_at >= fired.window.to, `${id}: ${onA.last_match_at} after ${fired.window.to}`);
      }
    } finally {
      await receiver.close();
      await s.close();
    }
  });

  test('kill -9 of the host evaluating a threshold monitor: another takes it within 2 × every, and its notification goes out once, with one delivery id across a retry after a second kill', { timeout: 300_000 }, async () => {
    const s = await installation();
    // The first request is never answered: the host sending it dies holding it.
    const receiver = await startReceiver(['hang', { status: 200 }]);
    try {
      const a = await s.host({ viaProxy: true });
      const channel = await a.api('POST', '/channels', { name: 'hook', kind: 'webhook', url: receiver.url });
      assert.equal(channel.status, 201, channel.text);
      // A's queries hang from now on: the monitor's evaluation on A never ends.
      s.proxy.stall();
      const created = await a.api('POST', '/monitors', { name: 'boom', kind: 'threshold', q: 'event:boom stats count()', window: '5m', every: '1m', condition: { op: '>', value: 2 }, channel_ids: [channel.body.id] });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id as string;
      const lease = await eventually(
        () => s.db.selectFrom('monitors').select(['lease_owner', 'lease_until']).where('id', '=', id).executeTakeFirstOrThrow(),
        (row) => row.lease_owner !== null,
        60_000,
      );
      const claimedAt = Date.parse(lease.lease_until!) - every;

      const b = await s.host();
      const ingested = Array.from({ length: 3 }, (_, i) => ({ event: 'boom', message: `boom-${i}` }));
      assert.equal((await b.api('POST', '/datasets/app/ingest', ingested)).status, 200);
      a.child.kill('SIGKILL');
      await exited(a.child);

      // B evaluates once A's lease has ended, and fires.
      const [first] = await receiver.waitFor(1, 3 * every);
      assert.ok(first!.at > Date.parse(lease.lease_until!), 'nobody evaluated the monitor while A held its lease');
      assert.ok(first!.at - claimedAt <= 2 * every, `the monitor was evaluated again ${first!.at - claimedAt} ms after A took it`);
      const body = JSON.parse(first!.body) as Body;
      assert.deepEqual([body.monitor.id, body.status, body.value], [id, 'firing', 3]);

      // B dies in the middle of sending it; a host started afterwards sends it again once the row's lease ends: the same delivery id.
      b.child.kill('SIGKILL');
      await exited(b.child);
      await s.host();
      const [, second] = await receiver.waitFor(2, 90_000);
      assert.equal(second!.headers['x-ops-delivery-id'], first!.headers['x-ops-delivery-id']);
      const rows = await eventually(
        () => s.db.selectFrom('notifications').select(['id', 'state']).where('monitor_id', '=', id).execute(),
        (list) => list.every((r) => r.state === 'delivered'),
      );
      assert.deepEqual(rows.map((r) => r.id), [first!.headers['x-ops-delivery-id']], 'one notification, one delivery id');
      const changes = await s.db.selectFrom('monitor_changes').select(['from_state', 'to_state']).where('monitor_id', '=', id).execute();
      assert.deepEqual(changes, [{ from_state: 'ok', to_state: 'firing' }]);
      await new Promise((r) => setTimeout(r, 2_000));
      assert.equal(receiver.received.length, 2, 'after the retry, nothing more');
    } finally {
      await receiver.close();
      await s.close();
    }
  });

  test('an evaluation that outlives its lease while another host took the monitor stores nothing when it ends', { timeout: 300_000 }, async () => {
    const s = await installation();
    const receiver = await startReceiver([{ status: 200 }]);
    try {
      const a = await s.host({ viaProxy: true });
      const channel = await a.api('POST', '/channels', { name: 'hook', kind: 'webhook', url: receiver.url });
      assert.equal(channel.status, 201, channel.text);
      s.proxy.stall();
      const created = await a.api('POST', '/monitors', { name: 'late', kind: 'threshold', q: 'event:late stats count()', window: '5m', every: '1m', condition: { op: '>', value: 0 }, channel_ids: [channel.body.id] });
      assert.equal(created.status, 201, created.text);
      const id = created.body.id as string;
      await eventually(
        () => s.db.selectFrom('monitors').select('lease_owner').where('id', '=', id).executeTakeFirstOrThrow(),
        (row) => row.lease_owner !== null,
        60_000,
      );
      // A is frozen in the middle of its evaluation (its query answered into its socket, unread),
      // so that it resumes with its answer however long it was away (a stall of more than a
      // minute at the proxy would have the events node close the connection instead).
      a.child.kill('SIGSTOP');
      await s.proxy.up();
      // Events after A's evaluation began: A's window ends before them, B's holds them.
      const b = await s.host();
      assert.equal((await b.api('POST', '/datasets/app/ingest', [{ event: 'late' }])).status, 200);
      const [fired] = await receiver.waitFor(1, 3 * every);
      assert.equal((JSON.parse(fired!.body) as Body).status, 'firing');

      // A's evaluation ends now: it saw no event, so it would resolve B's firing group with a notification of its own.
      a.child.kill('SIGCONT');
      // Its end shows as its log line, or as a second notification.
      await eventually(
        async () => ({ logged: a.logs.filter((line) => line.includes('monitors:')), received: receiver.received.length }),
        (seen) => seen.logged.length > 0 || seen.received > 1,
        60_000,
      );
      await new Promise((r) => setTimeout(r, 2_000));
      assert.deepEqual(bodiesOf(receiver).map((x) => x.status), ['firing'], 'the stale evaluation sent nothing');
      assert.match(a.logs.find((line) => line.includes('monitors:'))!, /the lease ran out during the evaluation/);
      const changes = await s.db.selectFrom('monitor_changes').select(['to_state']).where('monitor_id', '=', id).execute();
      assert.deepEqual(changes, [{ to_state: 'firing' }]);
      const groups = await s.db.selectFrom('monitor_groups').select(['state']).where('monitor_id', '=', id).execute();
      assert.deepEqual(groups, [{ state: 'firing' }]);
    } finally {
      await receiver.close();
      await s.close();
    }
  });
});
