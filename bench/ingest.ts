// npm run bench:ingest — sustained NDJSON ingest over HTTP (1,000 events per request, several
// concurrent clients) against the machine's limits measured in the same run: the same bytes
// through JSON.parse alone, and a bare DuckDB appender. Prints events/s, MB/s, p99, peak RSS
// and bytes on disk per event against the raw NDJSON. Two event shapes, each against a fresh
// server (BENCH_SHAPES=standard,realistic picks; see Shape below), then both side by side.
//
// Then the same load against a server whose events go to ClickHouse (OPS_EVENTS_URL=clickhouse://…,
// a database of this run's own; bench/clickhouse-support.ts says which ClickHouse, or one line
// why it was skipped): the same figures, plus the rate of loading into ClickHouse (count() every
// second until every acknowledged event is visible), and both side by side.
//
// Between the two: the shipper routes (Loki JSON, Loki protobuf, Elasticsearch bulk) carrying the
// same events beside native NDJSON on one server, alternating rounds, each route's events/s and
// its ratio to native's printed (bench/ingest-routes.ts; BENCH_ROUTES=0 leaves them out,
// BENCH_ROUTES_ONLY=1 runs only them, BENCH_ROUTE_SECONDS / BENCH_ROUTE_ROUNDS size them); and hot
// payload keys — the default settings' automatic ones against OPS_HOT_KEYS_AUTO=false, 8 pinned
// against none — on servers of their own, DuckDB and ClickHouse (bench/ingest-hot.ts; BENCH_HOT=0
// leaves it out, BENCH_HOT_ONLY=1 runs only it).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { v7 } from 'uuid';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { schemaSql } from '../src/engine/duckdb/duckdb-sql.js';
import { EventChunkBuilder, type ChunkRow } from '../src/engine/duckdb/duckdb-chunk.js';
import { eventStoreSettings } from '../src/engine/duckdb/duckdb-tables.js';
import { spawn } from 'node:child_process';
import { fmt, freePort, tempDir } from './support.js';
import { benchRoutes } from './ingest-routes.js';
import { benchHotKeys, type HotKeysBenchDeps, type HotServer } from './ingest-hot.js';
import { benchDatabaseUrl, ClickHouseHosts, clickHouseServerPids, cpuSecondsOf, dropClickHouseDatabase, findClickHouse } from './clickhouse-support.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const perRequest = 1_000;

/**
 * An event shape and how it is sent: `clients` concurrent clients, each request with the next
 * of `tokens` tokens (one tenant each, spread over organisations and projects).
 *
 * - standard: ~160 bytes, `ts` as epoch ms, a message, a
 *   3-key payload; 6 clients, one token.
 * - realistic: the shape an outside check measured: ~211 bytes, `ts` as an RFC 3339 string
 *   (varying), `source`, a 4-key payload, no message; 4 clients over 8 tokens (4 organisations ×
 *   2 projects).
 */
interface Shape {
  name: 'standard' | 'realistic';
  clients: number;
  tokens: number;
  bodies: Buffer[];
  rawBytesPerEvent: number;
  /** The appender baseline's rows: the event as the store holds it, with its tenant (1..tokens). */
  rows: ChunkRow[];
  rowTenants: number[];
}

const actions = ['match_start', 'match_end', 'player_join', 'player_leave', 'kill', 'chat', 'purchase'];
const maps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass'];
function standardEvent(n: number, i: number, base: number): Record<string, unknown> {
  return {
    ts: base + i,
    severity: i % 10 === 0 ? 'warn' : 'info',
    event: actions[n % actions.length],
    actor: `player-${(n * 7919) % 5000}`,
    message: `player ${(n * 7919) % 5000} ${actions[n % actions.length]} on ${maps[n % 5]}`,
    payload: { map: maps[n % 5], round: n % 30, score: (n * 31) % 1000 },
  };
}
const gameEvents = ['player_join', 'player_leave', 'match_start', 'round_end', 'kill', 'purchase', 'chat_message'];
const gameMaps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass', 'vertigo', 'ancient'];
const regions = ['eu-west-1', 'us-east-2', 'ap-south-1', 'sa-east-1'];
function realisticEvent(n: number, i: number, base: number): Record<string, unknown> {
  return {
    // RFC 3339 with milliseconds, varying by 1–40 ms from event to event.
    ts: new Date(base + i * 37 + (n % 11)).toISOString(),
    severity: i % 10 === 0 ? 'warn' : 'info',
    event: gameEvents[n % gameEvents.length],
    actor: `player-${(n * 7919) % 50000}`,
    source: `game-server/${regions[n % regions.length]}/node-${n % 16}`,
    payload: { map: gameMaps[n % gameMaps.length], ping: (n * 13) % 250, player_id: `p_${String((n * 7919) % 50000).padStart(10, '0')}`, round: n % 30 },
  };
}

function makeShape(name: Shape['name']): Shape {
  const make = name === 'standard' ? standardEvent : realisticEvent;
  const clients = Number(process.env.BENCH_CLIENTS ?? (name === 'standard' ? 6 : 4));
  const tokens = name === 'standard' ? 1 : 8;
  const base = Date.now() - 3_600_000;
  const bodies: Buffer[] = [];
  const rows: ChunkRow[] = [];
  const rowTenants: number[] = [];
  for (let b = 0; b < 32; b++) {
    const lines: string[] = [];
    for (let i = 0; i < perRequest; i++) {
      const e = make(b * perRequest + i, i, base + b * 40_000);
      const line = JSON.stringify(e);
      lines.push(line);
      if (b < 8) {
        rows.push({
          seq: 0,
          eventId: '',
          ts: typeof e.ts === 'number' ? e.ts : Date.parse(e.ts as string),
          ingestedAt: base,
          severity: e.severity === 'warn' ? 2 : 1,
          event: e.event as string,
          actor: e.actor as string,
          source: (e.source as string | undefined) ?? null,
          message: (e.message as string | undefined) ?? '',
          payload: JSON.stringify(e.payload),
          bytesRaw: line.length,
        });
        rowTenants.push((b % tokens) + 1);
      }
    }
    bodies.push(Buffer.from(lines.join('\n')));
  }
  const rawBytesPerEvent = bodies.reduce((sum, b) => sum + b.length, 0) / (bodies.length * perRequest);
  return { name, clients, tokens, bodies, rawBytesPerEvent, rows, rowTenants };
}

const shapes = (process.env.BENCH_SHAPES ?? 'standard,realistic').split(',').map((s) => makeShape(s.trim() as Shape['name']));

// Baseline 1: JSON.parse line by line, one core.
function parseBaseline(shape: Shape): number {
  let events = 0;
  const started = performance.now();
  while (performance.now() - started < 2_000) {
    for (const b of shape.bodies) {
      for (const line of b.toString('utf8').split('\n')) if (JSON.parse(line)) events++;
    }
  }
  return events / ((performance.now() - started) / 1000);
}

// Baseline 2: bare DuckDB appender into the events table layout: the store's own column-wise
// data chunks (duckdb-chunk.ts) from pre-parsed rows (one chunk per tenant's request, as the
// loader builds them), committed every 8,000 rows, with the store's settings — the DuckDB side
// of ingest without HTTP, parsing or validation.
async function appenderBaseline(shape: Shape): Promise<{ rate: number; cpuPerRow: number }> {
  const dir = tempDir('bench-appender-');
  const instance = await DuckDBInstance.create(path.join(dir, 'a.duckdb'), eventStoreSettings(path.join(dir, 'tmp')));
  const connection = await instance.connect();
  await connection.run(schemaSql);
  const { rows, rowTenants } = shape;
  const ids = rows.map(() => v7());
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  let seq = 0;
  for (let round = 0; round < 15; round++) {
    await connection.run('BEGIN TRANSACTION');
    const appender = await connection.createAppender('events');
    let chunk: EventChunkBuilder | undefined;
    let chunkTenant = 0;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (!chunk || chunk.full || chunkTenant !== rowTenants[i]) {
        if (chunk) appender.appendDataChunk(chunk.build());
        chunkTenant = rowTenants[i]!;
        chunk = new EventChunkBuilder(chunkTenant, 'ds_01JDZQ4X0000000000000000AB');
      }
      chunk.add({ ...r, seq: ++seq, eventId: ids[seq % ids.length]! });
    }
    if (chunk?.size) appender.appendDataChunk(chunk.build());
    appender.flushSync();
    appender.closeSync();
    await connection.run('COMMIT');
  }
  const rate = seq / ((performance.now() - started) / 1000);
  const cpu = process.cpuUsage(cpuStarted);
  connection.closeSync();
  instance.closeSync();
  fs.rmSync(dir, { recursive: true, force: true });
  // CPU of every thread of this process (chunk building in JS, DuckDB's threads): the loader's floor per event.
  return { rate, cpuPerRow: (cpu.user + cpu.system) / seq };
}

/**
 * A data directory with `count` tokens of every scope, each its own tenant: organisations of two
 * projects each (one token: one organisation). The server is not running.
 */
async function prepareDataDir(count: number): Promise<{ dataDir: string; tokens: string[] }> {
  const dataDir = tempDir('bench-ingest-');
  const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
  const tokens: string[] = [];
  for (let o = 0; tokens.length < count; o++) {
    const org = await ctx.orgs.createOrg({ name: `Bench ${o}`, plan: 'enterprise', ownerEmail: `bench${o}@example.com` });
    const projects = [org.project_id];
    if (count - tokens.length > 1) projects.push((await ctx.orgs.createProject(org.org_id, 'second')).project_id);
    for (const projectId of projects) {
      const { token } = await ctx.tokens.create({ tenant: { orgId: org.org_id, projectId, mode: 'live' }, name: 'bench', scopes: parseScopes('all'), expiresAt: null });
      tokens.push(token);
    }
  }
  await ctx.close();
  return { dataDir, tokens };
}
// The compiled server with the flags of `npm start` (npm run bench:ingest builds first): under
// tsx, each thread also runs tsx's loader, which added ~60 MB of RSS to the figure.
async function spawnServer(env: Record<string, string>) {
  const port = await freePort();
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server under load.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, ['--max-semi-space-size=8', '--heap-growing-percent=50', ...nodeArgs, 'bin/opsctl.js', 'serve'], {
    env: { ...process.env, OPS_HOST: '127.0.0.1', OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const apiUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${apiUrl}/readyz`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const stop = () => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))));
  return { child, apiUrl, stop };
}

const pacedRate = Number(process.env.BENCH_PACED_RATE ?? 60_000);

/** What loading into ClickHouse did: count() every second from the saturated run on, until every acknowledged event was there. */
interface ClickHouseLoad {
  /** Events visible at the end of the saturated run, and acknowledged by then. */
  visibleAtEnd: number;
  ackedAtEnd: number;
  /** Seconds from the end of the saturated run until count() reached every acknowledged event (NaN: not within the limit). */
  drainSeconds: number;
  /** Events loaded per second from the start of the saturated run until drained. */
  sustainedRate: number;
  /** The best and worst 5-second window of count() while loading, events/s. */
  windowMax: number;
  windowMin: number;
  /** Our server's CPU (all threads) from the start of the saturated run until drained, µs per event. */
  serverCpuPerEventDrained: number;
  /** The ClickHouse servers' CPU (both shards, this machine) over the same time, µs per event; NaN when not local. */
  clickhouseCpuPerEvent: number;
  probeFailures: number;
}

interface ThreadCpu {
  name: string;
  threads: number;
  perEvent: number;
}

/**
 * CPU per event of each thread between two samples, grouped: the main thread (the event loop);
 * the events worker thread (it names itself ops-events: loader, chunk building, the appender's
 * synchronous calls); the threads it started, which inherit its name; the rest: libuv's pool,
 * where DuckDB's asynchronous statements run (COMMIT, checkpoints) and the log's writev and
 * fdatasync, DuckDB's task threads (started from the pool) and V8's platform threads (GC).
 */
function threadBreakdown(before: Map<number, { name: string; cpu: number }>, after: Map<number, { name: string; cpu: number }>, pid: number, events: number): ThreadCpu[] {
  const groups = new Map<string, { threads: number; cpu: number }>();
  const add = (name: string, cpu: number) => {
    const g = groups.get(name) ?? { threads: 0, cpu: 0 };
    g.threads++;
    g.cpu += cpu;
    groups.set(name, g);
  };
  const worker = Math.min(...[...after].filter(([, t]) => t.name === 'ops-events').map(([tid]) => tid));
  for (const [tid, t] of after) {
    const cpu = t.cpu - (before.get(tid)?.cpu ?? 0);
    if (tid === pid) add('main thread (event loop)', cpu);
    else if (tid === worker) add('events worker thread (loader: decode, chunks, appender calls)', cpu);
    else if (t.name === 'ops-events') add("threads the worker started (DuckDB's: COMMIT, checkpoints)", cpu);
    else add('other threads (libuv pool: DuckDB statements incl. COMMIT, writev, fdatasync; DuckDB tasks; V8 GC)', cpu);
  }
  return [...groups].map(([name, g]) => ({ name, threads: g.threads, perEvent: (g.cpu / events) * 1e6 })).sort((a, b) => b.perEvent - a.perEvent);
}

interface EngineRun {
  result: { eventsPerSecond: number; mbPerSecond: number; p50: number; p99: number; events: number };
  cpuPerEvent: number;
  systemPerEvent: number;
  /** Server CPU per event during the saturated run by thread (groups of threads by name). */
  threadCpu: ThreadCpu[];
  lags: number[];
  pacedResult: { p50: number; p99: number; requests: number };
  /** Server CPU per event (all threads) during the paced run: the same rate for every server, so loads of the same size. */
  pacedCpuPerEvent: number;
  peakRss: number;
  peakRssSaturated: number;
  /** The machine's 1-minute load average when the server started and when it stopped (2 cores). */
  loadAverage: [number, number];
  clickhouse?: ClickHouseLoad;
}

/**
 * One server under the load: warm-up, the saturated run with freshness probes beside it, then
 * (ClickHouse: once the backlog has drained) the paced run. `clickhouse`: the events are in
 * ClickHouse (OPS_EVENTS_URL in `env`), whose count() is followed meanwhile.
 */
async function benchServer(shape: Shape, dataDir: string, tokens: string[], env: Record<string, string>, clickhouse?: ClickHouseHosts): Promise<EngineRun> {
  const { clients, bodies } = shape;
  const token = tokens[0]!;
  /** Requests rotate over the tokens (tenants). */
  let nextToken = 0;
  const loadBefore = os.loadavg()[0]!;
  const server = await spawnServer({ OPS_DATA_DIR: dataDir, OPS_LOG_LEVEL: 'warn', OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000', ...env });
  if (process.env.BENCH_NODE_ARGS) console.error(`${shape.name}: server pid ${server.child.pid}`);
  const url = new URL(`${server.apiUrl}/v1/datasets/bench/ingest`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  /** Events the server has acknowledged so far (all runs and probes). */
  let acked = 0;

  function post(payload: Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      const request = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { authorization: `Bearer ${tokens[nextToken++ % tokens.length]}`, 'content-type': 'application/x-ndjson', 'content-length': payload.length } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => {
            if (response.statusCode !== 200) return reject(new Error(`status ${response.statusCode}: ${Buffer.concat(chunks).toString()}`));
            const ingested = (JSON.parse(Buffer.concat(chunks).toString()) as { ingested: number }).ingested;
            acked += ingested;
            resolve(ingested);
          });
        },
      );
      request.on('error', reject);
      request.end(payload);
    });
  }

  let peakRss = 0;
  /** The peak until the end of the saturated run (warm-up included), before the paced run. */
  let peakRssSaturated: number;
  /** utime and stime of the server process, in seconds (Linux). */
  const serverTimes = () => {
    try {
      const fields = fs.readFileSync(`/proc/${server.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
    } catch {
      return { user: NaN, system: NaN };
    }
  };
  /** CPU seconds (user + system) of each thread of the server, by tid, with its name (Linux). */
  const threadTimes = () => {
    const times = new Map<number, { name: string; cpu: number }>();
    try {
      for (const tid of fs.readdirSync(`/proc/${server.child.pid}/task`)) {
        try {
          const fields = fs.readFileSync(`/proc/${server.child.pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
          const name = fs.readFileSync(`/proc/${server.child.pid}/task/${tid}/comm`, 'utf8').trim();
          times.set(Number(tid), { name, cpu: (Number(fields[11]) + Number(fields[12])) / 100 });
        } catch {
          // the thread ended
        }
      }
    } catch {
      // not Linux
    }
    return times;
  };
  const serverCpu = () => {
    const t = serverTimes();
    return t.user + t.system;
  };
  const sampleRss = () => {
    try {
      const status = fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
      peakRss = Math.max(peakRss, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024);
    } catch {
      // not Linux
    }
  };

  async function run(durationMs: number) {
    const latencies: number[] = [];
    let events = 0;
    let bytes = 0;
    const deadline = performance.now() + durationMs;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        let i = c;
        while (performance.now() < deadline) {
          const payload = bodies[i++ % bodies.length]!;
          const t0 = performance.now();
          const ingested = await post(payload);
          events += ingested;
          latencies.push(performance.now() - t0);
          bytes += payload.length;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return { eventsPerSecond: events / elapsed, mbPerSecond: bytes / 1e6 / elapsed, p50: latencies[Math.floor(latencies.length * 0.5)]!, p99: latencies[Math.floor(latencies.length * 0.99)]!, events };
  }

  /**
   * Query freshness, as a user sees it: one probe event is ingested, and as soon as it is
   * acknowledged a query asks for it. Reads wait for the loader to reach every acknowledged event
   * (read-your-writes), so the time from the acknowledgement to the answer holding the probe is
   * the lag from acknowledged to queryable (plus one small query). `failures`: count a probe
   * that is not answered (ClickHouse behind by more than the read wait) instead of throwing.
   */
  async function probeFreshness(until: () => boolean, failures?: { n: number }): Promise<number[]> {
    const lags: number[] = [];
    for (let n = 0; !until(); n++) {
      const marker = `probe-${n}-${Date.now()}`;
      const ack = await fetch(`${server.apiUrl}/v1/datasets/probe/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ event: 'probe', message: marker }) });
      if (!ack.ok) throw new Error(`probe ingest: ${ack.status} ${await ack.text()}`);
      acked++;
      const acknowledged = performance.now();
      const answer = await fetch(`${server.apiUrl}/v1/query`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ q: `dataset:probe AND message == "${marker}"` }) });
      const found = ((await answer.json()) as { events?: unknown[] }).events?.length ?? 0;
      if (!answer.ok || found !== 1) {
        if (!failures) throw new Error(`probe ${marker} not found right after its acknowledgement (status ${answer.status})`);
        failures.n++;
      } else lags.push(performance.now() - acknowledged);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return lags.sort((x, y) => x - y);
  }

  /** Requests paced to `eventsPerSecond` (1,000 events each): acknowledgement latency at that load. */
  async function paced(eventsPerSecond: number, durationMs: number) {
    const latencies: number[] = [];
    const interval = 1000 / (eventsPerSecond / perRequest);
    const started = performance.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; performance.now() - started < durationMs; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const t0 = performance.now();
      inFlight.push(post(bodies[i % bodies.length]!).then(() => void latencies.push(performance.now() - t0)));
    }
    await Promise.all(inFlight);
    latencies.sort((x, y) => x - y);
    return { p50: latencies[Math.floor(latencies.length * 0.5)]!, p99: latencies[Math.floor(latencies.length * 0.99)]!, requests: latencies.length };
  }

  /** count() through the Distributed table once a second, with the time it was asked. */
  const counts: Array<{ t: number; n: number }> = [];
  let counting = false;
  const countLoop = async () => {
    while (counting) {
      const t = performance.now();
      counts.push({ t, n: await clickhouse!.count() });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_000 - (performance.now() - t))));
    }
  };

  let result;
  let cpuPerEvent: number;
  let systemPerEvent: number;
  let threadCpu: ThreadCpu[];
  let lags: number[];
  let pacedResult;
  let pacedCpuPerEvent: number;
  let load: ClickHouseLoad | undefined;
  try {
    await run(2_000); // warm-up (JIT, first row groups)
    const timer = setInterval(sampleRss, 200);
    const cpuBefore = serverCpu();
    const threadsBefore = threadTimes();
    const systemBefore = serverTimes().system;
    const chPids = clickhouse ? clickHouseServerPids() : [];
    const chCpuBefore = cpuSecondsOf(chPids);
    let counted: Promise<void> | undefined;
    let countStart = 0;
    if (clickhouse) {
      countStart = await clickhouse.count();
      counting = true;
      counted = countLoop();
    }
    const runStarted = performance.now();
    let done = false;
    const failures = { n: 0 };
    const probing = probeFreshness(() => done, clickhouse ? failures : undefined);
    result = await run(seconds * 1000);
    done = true;
    const runEnded = performance.now();
    sampleRss();
    peakRssSaturated = peakRss;
    cpuPerEvent = ((serverCpu() - cpuBefore) / result.events) * 1e6;
    threadCpu = threadBreakdown(threadsBefore, threadTimes(), server.child.pid!, result.events);
    systemPerEvent = ((serverTimes().system - systemBefore) / result.events) * 1e6;
    lags = await probing;
    if (clickhouse) {
      // The backlog: wait until every acknowledged event is visible (at most BENCH_DRAIN_SECONDS).
      const ackedAtEnd = acked;
      const visibleAtEnd = counts.filter((c) => c.t <= runEnded).at(-1)?.n ?? countStart;
      const limitMs = Number(process.env.BENCH_DRAIN_SECONDS ?? 300) * 1000;
      let drainedAt = NaN;
      let visible = 0;
      while (performance.now() - runEnded < limitMs) {
        visible = await clickhouse.count();
        if (visible >= acked) {
          drainedAt = performance.now();
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      counting = false;
      await counted;
      const loadedEvents = visible - countStart;
      const windowRates: number[] = [];
      for (let i = 0; i < counts.length; i++) {
        const j = counts.findIndex((c) => c.t >= counts[i]!.t + 5_000);
        if (j < 0) break;
        if (counts[i]!.n >= acked) break;
        windowRates.push(((counts[j]!.n - counts[i]!.n) / (counts[j]!.t - counts[i]!.t)) * 1000);
      }
      const end = Number.isNaN(drainedAt) ? performance.now() : drainedAt;
      load = {
        visibleAtEnd,
        ackedAtEnd,
        drainSeconds: (drainedAt - runEnded) / 1000,
        sustainedRate: loadedEvents / ((end - runStarted) / 1000),
        windowMax: windowRates.length ? Math.max(...windowRates) : NaN,
        windowMin: windowRates.length ? Math.min(...windowRates) : NaN,
        serverCpuPerEventDrained: ((serverCpu() - cpuBefore) / loadedEvents) * 1e6,
        clickhouseCpuPerEvent: chPids.length ? ((cpuSecondsOf(chPids) - chCpuBefore) / loadedEvents) * 1e6 : NaN,
        probeFailures: failures.n,
      };
    }
    const pacedCpuBefore = serverCpu();
    pacedResult = await paced(pacedRate, 10_000);
    pacedCpuPerEvent = ((serverCpu() - pacedCpuBefore) / (pacedResult.requests * perRequest)) * 1e6;
    clearInterval(timer);
    sampleRss();
  } finally {
    counting = false;
    agent.destroy();
    await server.stop();
  }
  return { result, cpuPerEvent, systemPerEvent, threadCpu, lags, pacedResult, pacedCpuPerEvent, peakRss, peakRssSaturated, loadAverage: [loadBefore, os.loadavg()[0]!], ...(load ? { clickhouse: load } : {}) };
}

function printRun(title: string, shape: Shape, r: EngineRun, disk: string) {
  const { result, pacedResult, lags, cpuPerEvent, systemPerEvent, peakRss } = r;
  console.log(title);
  console.log(`  events/s            ${fmt(result.eventsPerSecond)}   (goal ≥ 130,000, then 260,000)`);
  console.log(`  MB/s                ${fmt(result.mbPerSecond, 1)}`);
  console.log(`  request latency     p50 ${fmt(result.p50, 1)} ms, p99 ${fmt(result.p99, 1)} ms (saturated, ${shape.clients} clients back to back)`);
  console.log(`  at ${fmt(pacedRate)} events/s    ack p50 ${fmt(pacedResult.p50, 1)} ms, p99 ${fmt(pacedResult.p99, 1)} ms   (goal p99 < 100; ${pacedResult.requests} requests paced over 10 s); server CPU ${fmt(r.pacedCpuPerEvent, 2)} µs/event`);
  console.log(`  freshness           acknowledged → queryable p50 ${fmt(lags[Math.floor(lags.length * 0.5)] ?? NaN, 1)} ms, p99 ${fmt(lags[Math.floor(lags.length * 0.99)] ?? NaN, 1)} ms (${lags.length} probes under the saturated load)`);
  console.log(`  server CPU          ${fmt(cpuPerEvent, 2)} µs/event (all threads: HTTP, parse, log, loader, DuckDB; goal ≤ 8; of which kernel ${fmt(systemPerEvent, 2)}; 2 cores = ${fmt(2e6 / cpuPerEvent)} events/s if CPU-bound)`);
  for (const t of r.threadCpu) if (t.perEvent >= 0.05) console.log(`    ${fmt(t.perEvent, 2).padStart(6)} µs/event  ${t.name}${t.threads > 1 ? ` (${t.threads} threads)` : ''}`);
  console.log(`  server peak RSS     ${fmt(r.peakRssSaturated / 1e6)} MB to the end of the saturated run, ${fmt(peakRss / 1e6)} MB after the paced one   (goal < 400; a paced run the server cannot keep up with queues requests)`);
  console.log(disk);
}

/** Each shape against a fresh embedded (DuckDB) server, with its same-run baselines. */
interface ShapeResult {
  shape: Shape;
  run: EngineRun;
  parseRate: number;
  appenderRate: number;
  appenderCpu: number;
}
const results: ShapeResult[] = [];
// BENCH_ROUTES_ONLY=1: only the shipper routes' comparison below (the shapes' runs take minutes).
const hotOnly = process.env.BENCH_HOT_ONLY === '1';
for (const shape of process.env.BENCH_ROUTES_ONLY === '1' || hotOnly ? [] : shapes) {
  const parseRate = parseBaseline(shape);
  const { rate: appenderRate, cpuPerRow: appenderCpu } = await appenderBaseline(shape);
  const duck = await prepareDataDir(shape.tokens);
  const duckRun = await benchServer(shape, duck.dataDir, duck.tokens, {});
  const eventsDir = path.join(duck.dataDir, 'events');
  const diskBytes = fs.readdirSync(eventsDir).filter((f) => f.startsWith('events.duckdb')).reduce((sum, f) => sum + fs.statSync(path.join(eventsDir, f)).size, 0);
  const ctx2 = await createContext(loadConfig({ OPS_DATA_DIR: duck.dataDir }), systemClock);
  await ctx2.close();
  const instance = await DuckDBInstance.create(path.join(eventsDir, 'events.duckdb'));
  const connection = await instance.connect();
  const stored = Number((await connection.runAndReadAll('SELECT count(*) FROM events')).getRows()[0]![0]);
  connection.closeSync();
  instance.closeSync();
  fs.rmSync(duck.dataDir, { recursive: true, force: true });

  const perEventOnDisk = diskBytes / stored;
  printRun(
    `ingest over HTTP, ${shape.name} shape: NDJSON, ${perRequest} events/request, ${shape.clients} clients, ${shape.tokens} token${shape.tokens > 1 ? 's (tenants)' : ''}, ${seconds} s, ${fmt(shape.rawBytesPerEvent)} bytes/event raw`,
    shape,
    duckRun,
    `  on disk             ${fmt(perEventOnDisk, 1)} bytes/event vs ${fmt(shape.rawBytesPerEvent)} raw = ${fmt(shape.rawBytesPerEvent / perEventOnDisk, 1)}× smaller   (goal ≥ 5×; ${fmt(stored)} events stored)`,
  );
  console.log('  same-run baselines');
  console.log(`    JSON.parse alone  ${fmt(parseRate)} lines/s (one core)`);
  console.log(`    DuckDB appender   ${fmt(appenderRate)} rows/s at ${fmt(appenderCpu, 2)} µs CPU/row, all threads (data chunks of the events layout, COMMIT every 8,000 rows, one process); events/s ÷ appender ${fmt(duckRun.result.eventsPerSecond / appenderRate, 2)}`);
  console.log('');
  results.push({ shape, run: duckRun, parseRate, appenderRate, appenderCpu });
}
if (results.length > 1) {
  console.log('shapes side by side (same run)');
  const cell = (v: string) => v.padStart(12);
  console.log(`  ${''.padEnd(30)}${results.map((r) => cell(r.shape.name)).join('')}`);
  const line = (label: string, value: (r: ShapeResult) => string) => console.log(`  ${label.padEnd(30)}${results.map((r) => cell(value(r))).join('')}`);
  line('bytes/event', (r) => fmt(r.shape.rawBytesPerEvent));
  line('events/s (HTTP, acknowledged)', (r) => fmt(r.run.result.eventsPerSecond));
  line('server CPU, µs/event', (r) => fmt(r.run.cpuPerEvent, 2));
  line('peak RSS saturated, MB', (r) => fmt(r.run.peakRssSaturated / 1e6));
  line('peak RSS with paced, MB', (r) => fmt(r.run.peakRss / 1e6));
  line(`ack p99 at ${fmt(pacedRate)}/s, ms`, (r) => fmt(r.run.pacedResult.p99, 1));
  line(`server CPU at ${fmt(pacedRate)}/s, µs/event`, (r) => fmt(r.run.pacedCpuPerEvent, 2));
  line('JSON.parse alone, lines/s', (r) => fmt(r.parseRate));
  line('bare appender, rows/s', (r) => fmt(r.appenderRate));
  line('bare appender, µs CPU/row', (r) => fmt(r.appenderCpu, 2));
  line('events/s ÷ appender', (r) => fmt(r.run.result.eventsPerSecond / r.appenderRate, 2));
  line('load average, start–end', (r) => r.run.loadAverage.map((l) => fmt(l, 1)).join('–'));
}
/** One fresh server (one tenant, log level warn, no rate limit) for a side comparison; stopped and removed after. */
async function onFreshServer(run: (apiUrl: string, pid: number, token: string) => Promise<void>): Promise<void> {
  const prepared = await prepareDataDir(1);
  const server = await spawnServer({ OPS_DATA_DIR: prepared.dataDir, OPS_LOG_LEVEL: 'warn', OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000' });
  try {
    console.log('');
    await run(server.apiUrl, server.child.pid!, prepared.tokens[0]!);
  } finally {
    await server.stop();
    fs.rmSync(prepared.dataDir, { recursive: true, force: true });
  }
}
// The shipper routes (Loki JSON, Loki protobuf, Elasticsearch bulk) beside native NDJSON.
if (process.env.BENCH_ROUTES !== '0' && !hotOnly) {
  await onFreshServer((apiUrl, pid, token) =>
    benchRoutes(apiUrl, pid, token, shapes[0]!.bodies, {
      clients: shapes[0]!.clients,
      perRequest,
      seconds: Number(process.env.BENCH_ROUTE_SECONDS ?? 5),
      rounds: Number(process.env.BENCH_ROUTE_ROUNDS ?? 3),
    }),
  );
}
// Hot payload keys on the whole write path: the default settings' automatic keys
// against OPS_HOT_KEYS_AUTO=false, and 8 pinned keys against none; DuckDB, then ClickHouse.
if (process.env.BENCH_HOT !== '0' && process.env.BENCH_ROUTES_ONLY !== '1') {
  const wanted = (process.env.BENCH_HOT_ENGINES ?? 'duckdb,clickhouse').split(',');
  const engines: HotKeysBenchDeps['engines'] = wanted.includes('duckdb') ? [{ name: 'DuckDB', env: () => ({}) }] : [];
  if (wanted.includes('clickhouse')) {
    const found = await findClickHouse();
    if ('skipped' in found) console.log(`\nhot keys on ClickHouse skipped: ${found.skipped}`);
    else {
      const urls: string[] = [];
      engines.push({
        name: `ClickHouse ${found.version}`,
        env: () => {
          urls.push(benchDatabaseUrl(found.base, 'ingesthot'));
          return { OPS_EVENTS_URL: urls[urls.length - 1]! };
        },
        done: async () => {
          for (const url of urls.splice(0)) await dropClickHouseDatabase(url);
        },
      });
    }
  }
  const server = async (env: Record<string, string>): Promise<HotServer> => {
    const prepared = await prepareDataDir(1);
    const running = await spawnServer({ OPS_DATA_DIR: prepared.dataDir, OPS_LOG_LEVEL: 'warn', OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000', ...env });
    return {
      apiUrl: running.apiUrl,
      pid: running.child.pid!,
      token: prepared.tokens[0]!,
      stop: async () => {
        await running.stop();
        fs.rmSync(prepared.dataDir, { recursive: true, force: true });
      },
    };
  };
  console.log('');
  await benchHotKeys(
    { server, realistic: makeShape('realistic').bodies, engines },
    {
      clients: Number(process.env.BENCH_CLIENTS ?? 4),
      perRequest,
      seconds: Number(process.env.BENCH_HOT_SECONDS ?? 5),
      rounds: Number(process.env.BENCH_HOT_ROUNDS ?? 3),
    },
  );
}
if (process.env.BENCH_ROUTES_ONLY === '1' || hotOnly) process.exit(0);
const duckRun = results[0]!.run;
const firstShape = results[0]!.shape;

// ClickHouse: the same load against a server whose events go to ClickHouse (its own database).
const found = await findClickHouse();
if ('skipped' in found) {
  console.log(`\nClickHouse skipped: ${found.skipped}`);
  process.exit(0);
}
const chUrl = benchDatabaseUrl(found.base, 'ingest');
const hosts = new ClickHouseHosts(chUrl);
const ch = await prepareDataDir(firstShape.tokens);
let chRun: EngineRun;
let chStored: number;
let chParts: { parts: number; bytes: number; rows: number };
try {
  chRun = await benchServer(firstShape, ch.dataDir, ch.tokens, { OPS_EVENTS_URL: chUrl }, hosts);
  chStored = await hosts.count();
  chParts = await hosts.parts();
} finally {
  await hosts.close();
  await dropClickHouseDatabase(chUrl);
  fs.rmSync(ch.dataDir, { recursive: true, force: true });
}
const load = chRun.clickhouse!;
const chPerEvent = chParts.bytes / chParts.rows;
console.log('');
printRun(
  `ingest over HTTP with events on ClickHouse ${found.version} (${hosts.clients.length} shard${hosts.clients.length > 1 ? 's' : ''}, OPS_EVENTS_URL=clickhouse://…): the ${firstShape.name} shape's load`,
  firstShape,
  chRun,
  `  on disk             ${fmt(chPerEvent, 1)} bytes/event in ClickHouse (active parts, before merges) vs ${fmt(firstShape.rawBytesPerEvent)} raw = ${fmt(firstShape.rawBytesPerEvent / chPerEvent, 1)}× smaller   (${fmt(chStored)} events stored)`,
);
const drained = Number.isNaN(load.drainSeconds) ? `not drained within ${process.env.BENCH_DRAIN_SECONDS ?? 300} s` : `drained ${fmt(load.drainSeconds, 1)} s after the run`;
console.log(
  `  load into ClickHouse ${fmt(load.sustainedRate)} events/s sustained (count() from the run's start until every acknowledged event was visible; ` +
    `5 s windows ${fmt(load.windowMin)}–${fmt(load.windowMax)}); at the run's end ${fmt(load.visibleAtEnd)} of ${fmt(load.ackedAtEnd)} acknowledged were visible, ${drained}`,
);
console.log(
  `  CPU until drained   our server ${fmt(load.serverCpuPerEventDrained, 2)} µs/event; ClickHouse servers ${Number.isNaN(load.clickhouseCpuPerEvent) ? 'not on this machine' : `${fmt(load.clickhouseCpuPerEvent, 2)} µs/event`}` +
    (load.probeFailures ? `; ${load.probeFailures} freshness probes not answered within the read wait` : ''),
);
console.log('\nside by side (same run)');
console.log(`  ${''.padEnd(28)} ${'duckdb'.padStart(12)} ${'clickhouse'.padStart(12)}`);
const row = (label: string, d: string, c: string) => console.log(`  ${label.padEnd(28)} ${d.padStart(12)} ${c.padStart(12)}`);
row('events/s (HTTP, acknowledged)', fmt(duckRun.result.eventsPerSecond), fmt(chRun.result.eventsPerSecond));
row('request p99, ms (saturated)', fmt(duckRun.result.p99, 1), fmt(chRun.result.p99, 1));
row(`ack p99 at ${fmt(pacedRate)}/s, ms`, fmt(duckRun.pacedResult.p99, 1), fmt(chRun.pacedResult.p99, 1));
row('server CPU, µs/event', fmt(duckRun.cpuPerEvent, 2), fmt(chRun.cpuPerEvent, 2));
row('server peak RSS, MB', fmt(duckRun.peakRss / 1e6), fmt(chRun.peakRss / 1e6));
row('load average, start–end', duckRun.loadAverage.map((l) => fmt(l, 1)).join('–'), chRun.loadAverage.map((l) => fmt(l, 1)).join('–'));
row('freshness p50, ms', fmt(duckRun.lags[Math.floor(duckRun.lags.length * 0.5)] ?? NaN, 1), fmt(chRun.lags[Math.floor(chRun.lags.length * 0.5)] ?? NaN, 1));
console.log(
  `goal: events/s on ClickHouse ≥ DuckDB's: ${chRun.result.eventsPerSecond >= duckRun.result.eventsPerSecond ? 'met' : 'not met'} ` +
    `(${fmt((100 * chRun.result.eventsPerSecond) / duckRun.result.eventsPerSecond)}% of DuckDB's)`,
);
process.exit(0);
