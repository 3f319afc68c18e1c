// npm run bench:ingest — sustained NDJSON ingest over HTTP (1,000 events per request, several
// concurrent clients) against the machine's limits measured in the same run: the same bytes
// through JSON.parse alone, and a bare DuckDB appender. Prints events/s, MB/s, p99, peak RSS
// and bytes on disk per event against the raw NDJSON.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { v7 } from 'uuid';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { schemaSql } from '../src/stores/events/duckdb-sql.js';
import { EventChunkBuilder } from '../src/stores/events/duckdb-chunk.js';
import { eventStoreSettings } from '../src/stores/events/duckdb-tables.js';
import { spawn } from 'node:child_process';
import { fmt, freePort, tempDir } from './support.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const clients = Number(process.env.BENCH_CLIENTS ?? 6);
const perRequest = 1_000;

// ~160-byte events with a small payload, varied so compression is not flattered.
const actions = ['match_start', 'match_end', 'player_join', 'player_leave', 'kill', 'chat', 'purchase'];
const maps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass'];
function body(seed: number): Buffer {
  const lines: string[] = [];
  const base = Date.now();
  for (let i = 0; i < perRequest; i++) {
    const n = seed * perRequest + i;
    lines.push(
      JSON.stringify({
        ts: base + i,
        severity: i % 10 === 0 ? 'warn' : 'info',
        event: actions[n % actions.length],
        actor: `player-${(n * 7919) % 5000}`,
        message: `player ${(n * 7919) % 5000} ${actions[n % actions.length]} on ${maps[n % 5]}`,
        payload: { map: maps[n % 5], round: n % 30, score: (n * 31) % 1000 },
      }),
    );
  }
  return Buffer.from(lines.join('\n'));
}
const bodies = Array.from({ length: 32 }, (_, i) => body(i));
const rawBytesPerEvent = bodies.reduce((sum, b) => sum + b.length, 0) / (bodies.length * perRequest);

// Baseline 1: JSON.parse line by line, one core.
function parseBaseline(): number {
  let events = 0;
  const started = performance.now();
  while (performance.now() - started < 2_000) {
    for (const b of bodies) {
      for (const line of b.toString('utf8').split('\n')) if (JSON.parse(line)) events++;
    }
  }
  return events / ((performance.now() - started) / 1000);
}

// Baseline 2: bare DuckDB appender into the events table layout: the store's own column-wise
// data chunks (duckdb-chunk.ts) from pre-parsed rows, committed every 8,000 rows, with the
// store's settings — the DuckDB side of ingest without HTTP, parsing or validation.
async function appenderBaseline(): Promise<number> {
  const dir = tempDir('bench-appender-');
  const instance = await DuckDBInstance.create(path.join(dir, 'a.duckdb'), eventStoreSettings(path.join(dir, 'tmp')));
  const connection = await instance.connect();
  await connection.run(schemaSql);
  const rows = bodies.slice(0, 8).flatMap((b) => b.toString('utf8').split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
  const ids = rows.map(() => v7());
  const started = performance.now();
  let seq = 0;
  for (let round = 0; round < 15; round++) {
    await connection.run('BEGIN TRANSACTION');
    const appender = await connection.createAppender('events');
    let chunk = new EventChunkBuilder(1, 'ds_01JDZQ4X0000000000000000AB');
    for (const r of rows) {
      if (chunk.full) {
        appender.appendDataChunk(chunk.build());
        chunk = new EventChunkBuilder(1, 'ds_01JDZQ4X0000000000000000AB');
      }
      chunk.add({
        seq: ++seq,
        eventId: ids[seq % ids.length]!,
        ts: r.ts as number,
        ingestedAt: r.ts as number,
        severity: 1,
        event: r.event as string,
        actor: r.actor as string,
        source: null,
        message: r.message as string,
        payload: JSON.stringify(r.payload),
        bytesRaw: 160,
      });
    }
    if (chunk.size) appender.appendDataChunk(chunk.build());
    appender.flushSync();
    appender.closeSync();
    await connection.run('COMMIT');
  }
  const rate = seq / ((performance.now() - started) / 1000);
  connection.closeSync();
  instance.closeSync();
  fs.rmSync(dir, { recursive: true, force: true });
  return rate;
}

const parseRate = parseBaseline();
const appenderRate = await appenderBaseline();

const dataDir = tempDir('bench-ingest-');
const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'enterprise', ownerEmail: 'bench@example.com' });
const { token } = await ctx.tokens.create({ tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' }, name: 'bench', scopes: parseScopes('all'), expiresAt: null });
await ctx.close();
// The compiled server with the flags of `npm start` (npm run bench:ingest builds first): under
// tsx, each thread also runs tsx's loader, which added ~60 MB of RSS to the figure.
async function spawnServer(env: Record<string, string>) {
  const port = await freePort();
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server under load.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, ['--max-semi-space-size=8', ...nodeArgs, 'bin/opsctl.js', 'serve'], {
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
  const stop = () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM')));
  return { child, apiUrl, stop };
}
const server = await spawnServer({ OPS_DATA_DIR: dataDir, OPS_LOG_LEVEL: 'warn', OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000' });
const url = new URL(`${server.apiUrl}/v1/datasets/bench/ingest`);
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });

function post(payload: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson', 'content-length': payload.length } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          if (response.statusCode !== 200) return reject(new Error(`status ${response.statusCode}: ${Buffer.concat(chunks).toString()}`));
          resolve((JSON.parse(Buffer.concat(chunks).toString()) as { ingested: number }).ingested);
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

let peakRss = 0;
/** utime and stime of the server process, in seconds (Linux). */
const serverTimes = () => {
  try {
    const fields = fs.readFileSync(`/proc/${server.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: NaN, system: NaN };
  }
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
 * the lag from acknowledged to queryable (plus one small query).
 */
async function probeFreshness(until: () => boolean): Promise<number[]> {
  const lags: number[] = [];
  for (let n = 0; !until(); n++) {
    const marker = `probe-${n}-${Date.now()}`;
    const ack = await fetch(`${server.apiUrl}/v1/datasets/probe/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ event: 'probe', message: marker }) });
    if (!ack.ok) throw new Error(`probe ingest: ${ack.status} ${await ack.text()}`);
    const acked = performance.now();
    const answer = await fetch(`${server.apiUrl}/v1/query`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ q: `dataset:probe AND message == "${marker}"` }) });
    const found = ((await answer.json()) as { events?: unknown[] }).events?.length ?? 0;
    if (!answer.ok || found !== 1) throw new Error(`probe ${marker} not found right after its acknowledgement (status ${answer.status})`);
    lags.push(performance.now() - acked);
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

const pacedRate = Number(process.env.BENCH_PACED_RATE ?? 60_000);
let result;
let cpuPerEvent: number;
let systemPerEvent: number;
let lags: number[];
let pacedResult;
try {
  await run(2_000); // warm-up (JIT, first row groups)
  const timer = setInterval(sampleRss, 200);
  const cpuBefore = serverCpu();
  const systemBefore = serverTimes().system;
  let done = false;
  const probing = probeFreshness(() => done);
  result = await run(seconds * 1000);
  done = true;
  cpuPerEvent = ((serverCpu() - cpuBefore) / result.events) * 1e6;
  systemPerEvent = ((serverTimes().system - systemBefore) / result.events) * 1e6;
  lags = await probing;
  pacedResult = await paced(pacedRate, 10_000);
  clearInterval(timer);
  sampleRss();
} finally {
  agent.destroy();
  await server.stop();
}
const eventsDir = path.join(dataDir, 'events');
const diskBytes = fs.readdirSync(eventsDir).filter((f) => f.startsWith('events.duckdb')).reduce((sum, f) => sum + fs.statSync(path.join(eventsDir, f)).size, 0);
const ctx2 = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
await ctx2.close();
const instance = await DuckDBInstance.create(path.join(eventsDir, 'events.duckdb'));
const connection = await instance.connect();
const stored = Number((await connection.runAndReadAll('SELECT count(*) FROM events')).getRows()[0]![0]);
connection.closeSync();
instance.closeSync();
fs.rmSync(dataDir, { recursive: true, force: true });

const perEventOnDisk = diskBytes / stored;
console.log(`ingest over HTTP: NDJSON, ${perRequest} events/request, ${clients} clients, ${seconds} s, ${fmt(rawBytesPerEvent)} bytes/event raw`);
console.log(`  events/s            ${fmt(result.eventsPerSecond)}   (goal ≥ 130,000, then 260,000)`);
console.log(`  MB/s                ${fmt(result.mbPerSecond, 1)}`);
console.log(`  request latency     p50 ${fmt(result.p50, 1)} ms, p99 ${fmt(result.p99, 1)} ms (saturated, ${clients} clients back to back)`);
console.log(`  at ${fmt(pacedRate)} events/s    ack p50 ${fmt(pacedResult.p50, 1)} ms, p99 ${fmt(pacedResult.p99, 1)} ms   (goal p99 < 100; ${pacedResult.requests} requests paced over 10 s)`);
console.log(`  freshness           acknowledged → queryable p50 ${fmt(lags[Math.floor(lags.length * 0.5)] ?? NaN, 1)} ms, p99 ${fmt(lags[Math.floor(lags.length * 0.99)] ?? NaN, 1)} ms (${lags.length} probes under the saturated load)`);
console.log(`  server CPU          ${fmt(cpuPerEvent, 2)} µs/event (all threads: HTTP, parse, log, loader, DuckDB; goal ≤ 8; of which kernel ${fmt(systemPerEvent, 2)}; 2 cores = ${fmt(2e6 / cpuPerEvent)} events/s if CPU-bound)`);
console.log(`  server peak RSS     ${fmt(peakRss / 1e6)} MB   (goal < 400)`);
console.log(`  on disk             ${fmt(perEventOnDisk, 1)} bytes/event vs ${fmt(rawBytesPerEvent)} raw = ${fmt(rawBytesPerEvent / perEventOnDisk, 1)}× smaller   (goal ≥ 5×; ${fmt(stored)} events stored)`);
console.log('same-run baselines');
console.log(`  JSON.parse alone    ${fmt(parseRate)} lines/s (one core)`);
console.log(`  DuckDB appender     ${fmt(appenderRate)} rows/s (data chunks of the events layout, COMMIT every 8,000 rows, one process)`);
