/**
 * On ClickHouse every API process is an ingester with a write-ahead log of its own,
 * and no events node stands between them and ClickHouse. Real processes (`opsctl serve`, `serve
 * --workers 2`), the real two-shard cluster of scripts/clickhouse.sh (OPS_TEST_CLICKHOUSE_URL),
 * and for the two hosts PostgreSQL as their shared metadata. kill -9 of a host mid-ingest, and
 * of ClickHouse's shard 2 (scripts/clickhouse.sh kill-node 2, then start).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@clickhouse/client';
import { Agent, fetch } from 'undici';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { parseScopes } from '../tokens/token-service.js';
import { exited, freePort, opsctlArgs, serveProcess } from '../test-support/test-process.js';
import { missingServices, services, sharedDatabase, TcpProxy } from '../test-support/cluster/test-services.js';
import { TailClient } from '../test-support/tail/test-client.js';
import { dropClickHouseDatabase, freshClickHouseUrl } from '../test-support/engine/clickhouse-testing.js';
import { parseClickHouseUrl } from '../config/clickhouse-url.js';
import { legs, needs } from '../test-support/ci.js';

const base = process.env.OPS_TEST_CLICKHOUSE_URL;
const onLeg = legs.clickhouse();
const missing = base ? await missingServices() : false;
const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/clickhouse.sh');
/**
 * Shard 2 is killed only when asked (OPS_TEST_CLICKHOUSE_KILL_SHARD=1: CI runs this file so, on its
 * own, after the ClickHouse leg, whose other files share the cluster) and when the script knows
 * the cluster's directory (its `env` exports it).
 */
const canKillShard = process.env.OPS_TEST_CLICKHOUSE_KILL_SHARD === '1' && !!process.env.OPS_CLICKHOUSE_DIR;
const secret = 'ingesters-test-secret-key-0123456789abcdef';

/** Direct SQL on the first host: what the API does not show (rows per log, exact counts). */
async function sql<T>(url: string, query: string): Promise<T[]> {
  const client = createClient({ url: parseClickHouseUrl(url).hosts[0], log: { level: 127 as never } });
  try {
    return await (await client.query({ query, format: 'JSONEachRow' })).json<T>();
  } finally {
    await client.close();
  }
}

/** An organisation and a token on the metadata store of `env` (SQLite in `dataDir`, or PostgreSQL). */
async function tokenOn(env: Record<string, string>): Promise<string> {
  const setup = await createContext(loadConfig(env), systemClock);
  try {
    const org = await setup.orgs.createOrg({ name: 'Ingesters', plan: 'enterprise', ownerEmail: 'ingest@example.com' });
    const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
    return (await setup.tokens.create({ tenant, name: 't', scopes: parseScopes('all'), expiresAt: null })).token;
  } finally {
    await setup.close();
  }
}

/** A connection per call (the cluster hands each new one to the next worker). */
async function call(api: string, token: string, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const dispatcher = new Agent();
  try {
    const ndjson = typeof body === 'string';
    const r = await fetch(`${api}/v1${urlPath}`, {
      dispatcher,
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json' }) },
      body: body === undefined ? undefined : ndjson ? body : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  } finally {
    await dispatcher.close();
  }
}

const lines = (messages: readonly string[]) => messages.map((message) => JSON.stringify({ event: 'load', message, payload: { k: message.length } })).join('\n');
const countOf = async (api: string, token: string, q = 'event:load group by event') => {
  const r = await call(api, token, 'POST', '/query', { q });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return ((r.body.groups as Array<{ count: number }>)[0]?.count ?? 0) as number;
};

/** Keeps ingesting batches of `size` unique messages on `api` until `stop()`; remembers the acknowledged ones. */
function ingestLoop(api: string, token: string, prefix: string, size: number) {
  const acknowledged: string[] = [];
  const failures: string[] = [];
  let stopped = false;
  let n = 0;
  const run = (async () => {
    while (!stopped) {
      const batch = Array.from({ length: size }, () => `${prefix}-${n++}`);
      try {
        const r = await call(api, token, 'POST', '/datasets/game/ingest', lines(batch));
        if (r.status === 200) acknowledged.push(...batch);
        else failures.push(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      } catch (error) {
        failures.push((error as Error).message);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  })();
  return {
    acknowledged,
    failures,
    stop: async () => {
      stopped = true;
      await run;
    },
  };
}

/** Every acknowledged message is stored once; nothing is stored twice (direct SQL: exact). */
async function assertExactlyOnce(url: string, acknowledged: readonly string[]) {
  const db = parseClickHouseUrl(url).database;
  const rows = await sql<{ message: string; n: string }>(url, `SELECT message, count() AS n FROM ${db}.events WHERE event = 'load' GROUP BY message`);
  const stored = new Map(rows.map((r) => [r.message, Number(r.n)]));
  const twice = rows.filter((r) => Number(r.n) > 1).map((r) => r.message);
  assert.deepEqual(twice.slice(0, 5), [], `${twice.length} events stored more than once`);
  const lost = acknowledged.filter((m) => !stored.has(m));
  assert.deepEqual(lost.slice(0, 5), [], `${lost.length} of ${acknowledged.length} acknowledged events are not stored`);
}

const waitFor = async (what: string, check: () => Promise<boolean>, ms = 60_000) => {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

onLeg.test('two API hosts on ClickHouse, no events node: read-your-writes across hosts, kill -9 of a host and of shard 2, every acknowledged event stored once', { ...needs(missing), timeout: 300_000 }, async () => {
  const url = freshClickHouseUrl(base!);
  const database = await sharedDatabase();
  const dirs = [0, 1, 2].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'ops-ingester-')));
  const shared = { OPS_DATABASE_URL: database.url, OPS_SECRET_KEY: secret, OPS_EVENTS_URL: url };
  const token = await tokenOn({ ...shared, OPS_DATA_DIR: dirs[2]! });
  const hostEnv = {
    ...shared,
    OPS_RATE_LIMIT_PER_SECOND: '100000',
    OPS_RATE_LIMIT_BURST: '100000',
    // Wake-ups across hosts; the poll (1 s) picks up whatever one misses.
    OPS_NATS_URL: `nats://${services.nats.host}:${services.nats.port}`,
  };
  const ports = [await freePort(), await freePort()];
  const children: ChildProcess[] = [];
  const start = async (i: number) => {
    const child = await serveProcess(dirs[i]!, ports[i]!, hostEnv);
    children.push(child);
    return child;
  };
  const [apiA, apiB] = ports.map((p) => `http://127.0.0.1:${p}`) as [string, string];
  // Every ingest loop, stopped in `finally`: a loop left running after a failed assertion kept the
  // file alive until the runner's 5-minute timeout.
  const loopsStarted: Array<ReturnType<typeof ingestLoop>> = [];
  const loop = (...args: Parameters<typeof ingestLoop>) => {
    const started = ingestLoop(...args);
    loopsStarted.push(started);
    return started;
  };
  try {
    await start(0);
    let b = await start(1);
    assert.equal((await call(apiA, token, 'POST', '/datasets', { name: 'game' })).status, 201);

    // Read-your-writes across hosts: an ingest answered by B is in every read on A right after.
    const all: string[] = [];
    for (let i = 0; i < 15; i++) {
      const batch = Array.from({ length: 100 }, (_, j) => `rw-${i}-${j}`);
      const r = await call(apiB, token, 'POST', '/datasets/game/ingest', lines(batch));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      all.push(...batch);
      assert.equal(await countOf(apiA, token), all.length, `round ${i}: host A sees every event host B acknowledged`);
    }

    // Live tail across the hosts: sessions on A and on B see both hosts' events, each once, in
    // each host's order; one closed midway resumes on the other host from its last id.
    const tailOn = async (api: string, lastEventId?: string) => {
      const opened = await TailClient.open(`${api}/v1`, token, 'event:tailed', lastEventId ? { lastEventId } : {});
      assert.equal(opened.status, 200, JSON.stringify(opened));
      return (opened as { client: TailClient }).client;
    };
    const [tailA, tailB, moving] = [await tailOn(apiA), await tailOn(apiB), await tailOn(apiA)];
    const tailed = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ event: 'tailed', message: `${prefix}-${i}` })).join('\n');
    const writers = ['A', 'B'].flatMap((host) =>
      [0, 1].map(async (w) => {
        for (let r = 0; r < 25; r++) {
          const res = await call(host === 'A' ? apiA : apiB, token, 'POST', '/datasets/game/ingest', tailed(`${host}${w}-${r}`, 100));
          assert.equal(res.status, 200);
        }
      }),
    );
    await moving.until((c) => c.events.length >= 2_000, 60_000, 'the moving session reaches 2,000 events');
    const handedOver = moving.events.slice(0, 2_000);
    await moving.close();
    await Promise.all(writers);
    const expected = new Set(['A', 'B'].flatMap((host) => [0, 1].flatMap((w) => Array.from({ length: 25 }, (_, r) => Array.from({ length: 100 }, (_, i) => `${host}${w}-${r}-${i}`)).flat())));
    assert.equal(expected.size, 10_000);
    const resumed = await tailOn(apiB, handedOver.at(-1)!.lastEventId);
    const complete = async (client: TailClient, what: string, already: readonly string[] = []) => {
      await client.until((c) => already.length + c.events.length >= 10_000, 90_000, `${what}: 10,000 events`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const seen = [...already, ...client.events.map((e) => e.data.message as string)];
      assert.equal(seen.length, 10_000, `${what}: nothing repeated`);
      assert.deepEqual(new Set(seen), expected, `${what}: nothing missing`);
      // Each writer's batches in the order they were acknowledged.
      for (const writer of ['A0', 'A1', 'B0', 'B1']) {
        const own = seen.filter((m) => m.startsWith(`${writer}-`)).map((m) => m.split('-').slice(1).map(Number));
        assert.ok(own.every((x, i) => i === 0 || x[0]! > own[i - 1]![0]! || (x[0] === own[i - 1]![0] && x[1]! > own[i - 1]![1]!)), `${what}: ${writer}'s events in order`);
      }
    };
    await complete(tailA, 'the session on A');
    await complete(tailB, 'the session on B');
    await complete(resumed, 'the session moved from A to B', handedOver.map((e) => e.data.message as string));
    await Promise.all([tailA.close(), tailB.close(), resumed.close()]);

    // kill -9 of B in the middle of ingest on both: A keeps ingesting and answering.
    const onA = loop(apiA, token, 'a1', 50);
    const onB = [0, 1, 2].map((k) => loop(apiB, token, `b1${k}`, 50));
    await waitFor('host B acknowledges events', async () => onB.some((l) => l.acknowledged.length >= 200));
    b.kill('SIGKILL');
    await exited(b);
    const afterKill = onA.acknowledged.length;
    await waitFor('host A keeps acknowledging with B dead', async () => onA.acknowledged.length >= afterKill + 500);
    assert.ok((await countOf(apiA, token)) >= all.length + afterKill, 'host A answers queries with B dead');
    await Promise.all(onB.map((l) => l.stop()));
    await onA.stop();
    assert.deepEqual(onA.failures, [], 'no ingest on host A failed while B died');

    // B again on the same directory: it loads what its log holds that ClickHouse lacks.
    b = await start(1);
    const acknowledged = [...all, ...onA.acknowledged, ...onB.flatMap((l) => l.acknowledged)];
    await assertExactlyOnce(url, acknowledged);
    const logs = await sql<{ log_id: string }>(url, `SELECT DISTINCT log_id FROM ${parseClickHouseUrl(url).database}.events`);
    assert.equal(logs.length, 2, 'two ingesters, two logs');

    if (canKillShard) {
      // Shard 2 killed mid-ingest and brought back: ingest goes on (answered on the logs' durability
      // while loads fail), and the loaders catch up once it answers again.
      const loops = [loop(apiA, token, 'a2', 50), loop(apiB, token, 'b2', 50)];
      await waitFor('both hosts acknowledge', async () => loops.every((l) => l.acknowledged.length >= 200));
      const killed = spawnSync(script, ['kill-node', '2'], { encoding: 'utf8' });
      assert.equal(killed.status, 0, killed.stderr);
      try {
        const during = loops.map((l) => l.acknowledged.length);
        await waitFor('ingest answered with shard 2 down', async () => loops.every((l, i) => l.acknowledged.length >= during[i]! + 200));
      } finally {
        const started = spawnSync(script, ['start'], { encoding: 'utf8' });
        assert.equal(started.status, 0, started.stderr);
      }
      const backUp = loops.map((l) => l.acknowledged.length);
      await waitFor('ingest after shard 2 is back', async () => loops.every((l, i) => l.acknowledged.length >= backUp[i]! + 200));
      await Promise.all(loops.map((l) => l.stop()));
      for (const l of loops) assert.deepEqual(l.failures, [], 'no ingest failed while shard 2 was down');
      acknowledged.push(...loops.flatMap((l) => l.acknowledged));
      // Reads wait for each host's own loader (read-your-writes): once a query answers on each, its log is loaded.
      await waitFor('both hosts answer queries again', async () => (await call(apiA, token, 'POST', '/query', { q: 'event:load group by event' })).status === 200 && (await call(apiB, token, 'POST', '/query', { q: 'event:load group by event' })).status === 200);
      await assertExactlyOnce(url, acknowledged);
    }
  } finally {
    await Promise.all(loopsStarted.map((l) => l.stop()));
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    if (canKillShard) spawnSync(script, ['start']);
    await dropClickHouseDatabase(url).catch(() => undefined);
    await database.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
});

onLeg.test('serve --workers 2 on ClickHouse: no events node, both workers ingest with logs of their own, each reads what the other acknowledged', { timeout: 180_000 }, async () => {
  const url = freshClickHouseUrl(base!);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-ch-workers-'));
  const token = await tokenOn({ OPS_DATA_DIR: dataDir });
  const port = await freePort();
  let log = '';
  const primary = spawn(process.execPath, opsctlArgs('serve', '--workers', '2'), {
    env: {
      ...process.env,
      OPS_DATA_DIR: dataDir,
      OPS_EVENTS_URL: url,
      OPS_PORT: String(port),
      OPS_CDN_PORT: String(await freePort()),
      OPS_HOST: '127.0.0.1',
      OPS_LOG_LEVEL: 'info',
      OPS_RATE_LIMIT_PER_SECOND: '100000',
      OPS_RATE_LIMIT_BURST: '100000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  primary.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  const api = `http://127.0.0.1:${port}`;
  try {
    await waitFor('serve --workers 2 answers /readyz', async () => (await fetch(`${api}/readyz`)).ok, 90_000);
    assert.equal((await call(api, token, 'POST', '/datasets', { name: 'game' })).status, 201);
    for (let i = 0; i < 20; i++) {
      assert.equal((await call(api, token, 'POST', '/datasets/game/ingest', lines([`w-${i}`]))).status, 200);
      // The next connection goes to the other worker: it reads what this one acknowledged.
      assert.equal(await countOf(api, token), i + 1);
      // One more connection every other round, so the ingests land on both workers in turn.
      if (i % 2 === 0) assert.equal((await call(api, token, 'GET', '/datasets')).status, 200);
    }
    assert.doesNotMatch(log, /events node started/);
    const db = parseClickHouseUrl(url).database;
    const perLog = await sql<{ log_id: string; n: string }>(url, `SELECT log_id, count() AS n FROM ${db}.events GROUP BY log_id ORDER BY log_id`);
    assert.equal(perLog.length, 2, `both workers ingested: ${JSON.stringify(perLog)}`);
    assert.equal(perLog.reduce((sum, r) => sum + Number(r.n), 0), 20);
    assert.ok(fs.existsSync(path.join(dataDir, 'events', 'log-id')) && fs.existsSync(path.join(dataDir, 'events-1', 'log-id')), 'each worker has its own events directory');
  } finally {
    primary.kill('SIGTERM');
    await exited(primary);
    await dropClickHouseDatabase(url).catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  assert.equal(primary.exitCode, 0);
});

onLeg.test('a host that never comes back: its log, copied elsewhere, is loaded by `opsctl events replay --dir`, exactly once', { timeout: 180_000 }, async () => {
  const direct = freshClickHouseUrl(base!);
  const target = parseClickHouseUrl(direct);
  // The host reaches ClickHouse through proxies this test cuts: its loads fail, its ingests are answered on its log.
  const proxies = await Promise.all(target.hosts.map((h) => TcpProxy.start({ host: new URL(h).hostname, port: Number(new URL(h).port) })));
  const viaProxies = `clickhouse://${proxies.map((p) => `127.0.0.1:${p.port}`).join(',')}/${target.database}?${target.cluster ? `cluster=${target.cluster}&` : ''}timeout_ms=2000`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-replay-'));
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-replay-copy-'));
  const token = await tokenOn({ OPS_DATA_DIR: dataDir });
  const port = await freePort();
  let host: ChildProcess | undefined;
  try {
    host = await serveProcess(dataDir, port, { OPS_EVENTS_URL: viaProxies, OPS_EVENTS_READ_WAIT_MS: '2000' });
    const api = `http://127.0.0.1:${port}`;
    assert.equal((await call(api, token, 'POST', '/datasets', { name: 'game' })).status, 201);
    const loaded = Array.from({ length: 30 }, (_, i) => `before-${i}`);
    assert.equal((await call(api, token, 'POST', '/datasets/game/ingest', lines(loaded))).status, 200);
    await Promise.all(proxies.map((p) => p.down()));
    const logged: string[] = [];
    for (let i = 0; i < 5; i++) {
      const batch = Array.from({ length: 40 }, (_, j) => `logged-${i}-${j}`);
      const r = await call(api, token, 'POST', '/datasets/game/ingest', lines(batch));
      assert.equal(r.status, 200, `ingest is answered on the log's durability while ClickHouse is unreachable: ${JSON.stringify(r.body)}`);
      logged.push(...batch);
    }
    host.kill('SIGKILL');
    await exited(host);
    host = undefined;
    // The host is gone for good; an operator copies its events directory to a machine that reaches ClickHouse.
    fs.cpSync(path.join(dataDir, 'events'), copy, { recursive: true });
    fs.rmSync(path.join(copy, 'events.lock'), { force: true });
    const replay = (dir: string) =>
      spawnSync(process.execPath, opsctlArgs('events', 'replay', '--dir', dir, '--json'), {
        env: { ...process.env, OPS_DATA_DIR: dataDir, OPS_EVENTS_URL: direct, OPS_LOG_LEVEL: 'warn' },
        encoding: 'utf8',
      });
    const first = replay(copy);
    assert.equal(first.status, 0, first.stderr);
    const report = JSON.parse(first.stdout) as { log_id: string; position: number };
    assert.match(report.log_id, /^[0-9a-f]{16}$/);
    assert.equal(report.position, 30 + 200);
    await assertExactlyOnce(direct, [...loaded, ...logged]);
    // Run again (an operator unsure it worked): nothing is stored twice.
    assert.equal(replay(copy).status, 0);
    await assertExactlyOnce(direct, [...loaded, ...logged]);
    const [row] = await sql<{ n: string }>(direct, `SELECT count() AS n FROM ${target.database}.events`);
    assert.equal(Number(row!.n), 230);

    const wrong = replay(path.join(copy, 'wal', 'nothing-here'));
    assert.equal(wrong.status, 1, 'a directory that is not an events directory is refused');
    assert.match(wrong.stdout, /not an events directory/);
  } finally {
    host?.kill('SIGKILL');
    if (host) await exited(host);
    await Promise.all(proxies.map((p) => p.down()));
    await dropClickHouseDatabase(direct).catch(() => undefined);
    for (const dir of [dataDir, copy]) fs.rmSync(dir, { recursive: true, force: true });
  }
});
