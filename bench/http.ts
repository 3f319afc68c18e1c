// npm run bench:http — throughput and latency of an authenticated GET /v1/orgs/{id}/members
// against a bare Fastify route, each as its own process on this machine, in the same run; and a
// third peer, the bare route plus the least the contract asks of a request (bench/bare-server.ts),
// to show how much of the gap any implementation of the contract would have. Then the same GET
// served by `opsctl serve --workers 2` (two API processes sharing the port, the events node in the
// primary), and that again with the rate limit shared through Redis (OPS_REDIS_URL), when Redis
// answers on 127.0.0.1:6379 (BENCH_REDIS=0 leaves that row out).
//
// Then the cost of a request on heavier endpoints: GET /v1/media?limit=10 with
// 10 files, GET /v1/datasets (3 datasets with 1,000 events each) and POST /v1/query answering a
// page of 100 events, each served by one process and by --workers 2, beside a bare node:http
// process answering the same bytes (each answer captured once from our server and replayed:
// bench/bare-server.ts `replay`); members?limit=1 gets that peer too. BENCH_ENDPOINTS=media,query
// (any of members, media, datasets, query) measures only those; members is always measured
// against the bare Fastify route and the floor as well.
//
// BENCH_ENDPOINTS=tokens (not in the default set) measures POST /v1/tokens, a token creation with
// its audit entry written in the same transaction; BENCH_BASELINE=DIR adds a row for the
// same request against another built checkout (e.g. the commit before the audit log: `git archive
// <commit> | tar -x -C DIR`, node_modules linked, `npx tsc -p tsconfig.build.json` there), so the
// entry's CPU is read beside what the creation cost without it, in the same run. The goal line
// compares it with this checkout set up and started the same way (opsctl init's data dir and
// token: the row "ours, set up as baseline"), not with the "ours" row's server, which this script
// seeds differently: with the same code in both, that pair read 15–40% apart.
//
// The load generator: wrk (Debian's package, C, one thread) when it is installed, else autocannon
// (BENCH_LOAD_CLIENT=wrk|autocannon chooses). It shares the machine's 2 cores with the servers,
// so its CPU per request bounds what a second worker can gain: autocannon spends ~13–17 µs a
// request, about half of what our server spends on a members list; wrk a fraction of that.
//
// BENCH_CLIENT_WORKERS=N runs autocannon in N worker threads of this process instead of its main
// thread (the load generator shares the machine's cores with the servers: see the note printed).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { execFileSync, spawn as spawnChild } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { cpuSince, seedHeavyEndpoints, fmt, freePort, groupCpuMicros, killOnExit, median, startOpsctl, tcpReachable, tempDir, type Captured, type Started } from './support.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = 32;
const clientWorkers = Number(process.env.BENCH_CLIENT_WORKERS ?? 0);
const workers = 2;
const endpointNames = ['members', 'media', 'datasets', 'query', 'tokens'] as const;
type EndpointName = (typeof endpointNames)[number];
const defaultEndpoints = 'members,media,datasets,query';
const endpoints = (process.env.BENCH_ENDPOINTS ?? defaultEndpoints).split(',').filter((e): e is EndpointName => (endpointNames as readonly string[]).includes(e));
const baselineDir = process.env.BENCH_BASELINE;

/** What autocannon sends: one request, the same every time. */
interface Target {
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers: Record<string, string>;
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** server CPU (user + system, all threads, every process of the server) per request, in µs */
  cpu: number;
  /** the load generator's CPU per request (this process: autocannon runs in it), in µs */
  clientCpu: number;
  /** the load generator's CPU over the run, in cores (1 = one core busy the whole time) */
  clientCores: number;
  /** each server process's CPU over the run, in cores, busiest first */
  processCores: number[];
  /** the whole machine's busy CPU over the run (every process, this one included), in cores; and the time the host stole */
  machineCores: number;
  stealCores: number;
  /** Redis's CPU per request in µs and commands per request (rows with OPS_REDIS_URL) */
  redis?: { cpu: number; commands: number };
}

/** CPU time a process has used so far, in µs (Linux /proc; NaN elsewhere). */
function cpuMicros(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks of 10 ms
  } catch {
    return NaN;
  }
}

/** The machine's busy and stolen CPU time so far, in µs (/proc/stat's first line, in ticks of 10 ms). */
function machineCpu(): { busy: number; steal: number } {
  const [user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { busy: (user! + nice! + system! + irq! + softirq!) * 1e4, steal: steal! * 1e4 };
}

/** Redis's own account: CPU seconds and commands processed so far. */
async function redisStats(redis: Redis): Promise<{ cpuUs: number; commands: number }> {
  const info = await redis.info();
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return { cpuUs: (field('used_cpu_user') + field('used_cpu_sys')) * 1e6, commands: field('total_commands_processed') };
}

/** What a row's server costs: its processes' CPU by pid (one process, or a process group). */
type CpuReading = () => Map<number, number>;

const hasWrk = (() => {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk prints its version and exits 1; only a missing binary is ENOENT.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
})();
const loadClient = (process.env.BENCH_LOAD_CLIENT ?? (hasWrk ? 'wrk' : 'autocannon')) as 'wrk' | 'autocannon';

/** wrk's Lua: the request, and a JSON summary at the end (latency in µs). */
function wrkScript(target: Target): string {
  const file = path.join(os.tmpdir(), `bench-http-${crypto.randomBytes(4).toString('hex')}.lua`);
  const lines = [`wrk.method = ${JSON.stringify(target.method ?? 'GET')}`];
  for (const [name, value] of Object.entries(target.headers)) lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  if (target.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(target.body)}`);
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    `  io.write(string.format('WRK {"requests":%d,"us":%d,"errors":%d,"status":%d,"p50":%d,"p99":%d}\\n',`,
    '    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99)))',
    'end',
  );
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** One run of wrk (one thread, `connections` connections): its figures and its CPU (GNU time's). */
async function runWrk(target: Target, duration: number): Promise<{ requests: number; errors: number; non2xx: number; p50: number; p99: number; cpuUs: number }> {
  const script = wrkScript(target);
  try {
    const child = spawnChild('/usr/bin/time', ['-f', 'WRKCPU %U %S', 'wrk', '-t1', `-c${connections}`, '--timeout', '10s', `-d${duration}s`, '-s', script, target.url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const summary = /WRK (\{.*\})/.exec(out)?.[1];
    const cpu = /WRKCPU ([\d.]+) ([\d.]+)/.exec(err);
    if (code !== 0 || !summary || !cpu) throw new Error(`wrk failed (${code}): ${out}${err}`);
    const s = JSON.parse(summary) as { requests: number; errors: number; status: number; p50: number; p99: number };
    return { requests: s.requests, errors: s.errors, non2xx: s.status, p50: s.p50 / 1000, p99: s.p99 / 1000, cpuUs: (Number(cpu[1]) + Number(cpu[2])) * 1e6 };
  } finally {
    fs.rmSync(script, { force: true });
  }
}

async function load(target: Target, cpuOf: CpuReading, redis?: Redis, duration = seconds): Promise<Figures> {
  if (loadClient === 'wrk') return loadWithWrk(target, cpuOf, redis, duration);
  const { url, headers } = target;
  const before = cpuOf();
  const redisBefore = redis ? await redisStats(redis) : undefined;
  const clientBefore = process.cpuUsage();
  const machineBefore = machineCpu();
  const startedAt = performance.now();
  const result = await autocannon({
    url,
    headers,
    method: target.method ?? 'GET',
    ...(target.body === undefined ? {} : { body: target.body }),
    connections,
    duration,
    pipelining: 1,
    ...(clientWorkers > 0 ? { workers: clientWorkers } : {}),
  });
  const wallUs = (performance.now() - startedAt) * 1000;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const client = process.cpuUsage(clientBefore);
  const machine = machineCpu();
  const used = cpuSince(before, cpuOf());
  const redisAfter = redis ? await redisStats(redis) : undefined;
  const total = result.requests.total;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpu: [...used.values()].reduce((a, b) => a + b, 0) / total,
    clientCpu: (client.user + client.system) / total,
    clientCores: (client.user + client.system) / wallUs,
    processCores: [...used.values()].map((us) => us / wallUs).sort((a, b) => b - a),
    machineCores: (machine.busy - machineBefore.busy) / wallUs,
    stealCores: (machine.steal - machineBefore.steal) / wallUs,
    redis: redisBefore && redisAfter ? { cpu: (redisAfter.cpuUs - redisBefore.cpuUs) / total, commands: (redisAfter.commands - redisBefore.commands) / total } : undefined,
  };
}

async function loadWithWrk(target: Target, cpuOf: CpuReading, redis: Redis | undefined, duration: number): Promise<Figures> {
  const before = cpuOf();
  const redisBefore = redis ? await redisStats(redis) : undefined;
  const machineBefore = machineCpu();
  const startedAt = performance.now();
  const result = await runWrk(target, duration);
  const wallUs = (performance.now() - startedAt) * 1000;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const machine = machineCpu();
  const used = cpuSince(before, cpuOf());
  const redisAfter = redis ? await redisStats(redis) : undefined;
  const total = result.requests;
  return {
    rps: total / (wallUs / 1e6),
    p50: result.p50,
    p99: result.p99,
    cpu: [...used.values()].reduce((a, b) => a + b, 0) / total,
    clientCpu: result.cpuUs / total,
    clientCores: result.cpuUs / wallUs,
    processCores: [...used.values()].map((us) => us / wallUs).sort((a, b) => b - a),
    machineCores: (machine.busy - machineBefore.busy) / wallUs,
    stealCores: (machine.steal - machineBefore.steal) / wallUs,
    redis: redisBefore && redisAfter ? { cpu: (redisAfter.cpuUs - redisBefore.cpuUs) / total, commands: (redisAfter.commands - redisBefore.commands) / total } : undefined,
  };
}

// Every process of the installation shares one secret key (a worker's cursor verifies on another).
const secret = crypto.randomBytes(32).toString('base64');
const dataDir = tempDir('bench-http-');
const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir, OPS_SECRET_KEY: secret }), systemClock);
const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'pro', ownerEmail: 'bench@example.com' });
for (let i = 0; i < 20; i++) await ctx.orgs.addMember({ orgId: org.org_id, email: `m${i}@example.com`, role: 'Developer' });
const { token } = await ctx.tokens.create({ tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' }, name: 'bench', scopes: parseScopes('all'), expiresAt: null });
await ctx.close();
// The servers with workers each get a copy: their events node owns the events of its data dir,
// as the single process owns those of the first.
const copies = [tempDir('bench-http-workers-'), tempDir('bench-http-redis-')];
for (const copy of copies) fs.cpSync(dataDir, copy, { recursive: true });

const useRedis = process.env.BENCH_REDIS !== '0' && endpoints.includes('members') && (await tcpReachable('127.0.0.1', 6379));
// A key prefix of this run's own: the counters of other runs and tests on this Redis are not ours.
const redisUrl = `redis://127.0.0.1:6379/?keyPrefix=bench-http-${crypto.randomBytes(4).toString('hex')}:`;
const redis = useRedis ? new Redis('redis://127.0.0.1:6379', { lazyConnect: true }) : undefined;
await redis?.connect();

const barePort = await freePort();
const bare = killOnExit(spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts', String(barePort)], { stdio: 'inherit' }));
const floorPort = await freePort();
const floorDir = tempDir('bench-http-floor-');
const floor = killOnExit(spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts', String(floorPort), 'contract', floorDir], { stdio: 'inherit' }));
const auth = { authorization: `Bearer ${token}` };
const replayPort = await freePort();
const replayFile = `${floorDir}/captured.json`;
let replay: ReturnType<typeof spawn> | undefined;
const captured = new Map<EndpointName, Captured>();
const serverEnv = { OPS_SECRET_KEY: secret, OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000' };
async function server(dir: string, args: string[], env: Record<string, string> = {}): Promise<{ started: Started; url: string; base: string }> {
  const port = await freePort();
  const started = await startOpsctl({
    args,
    env: { ...serverEnv, OPS_DATA_DIR: dir, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), ...env },
    ready: `http://127.0.0.1:${port}/healthz`,
  });
  const base = `http://127.0.0.1:${port}`;
  return { started, url: `${base}/v1/orgs/${org.org_id}/members?limit=1`, base };
}

/** The request of each endpoint, against the server at `base`. */
const targetOf = (endpoint: EndpointName, base: string): Target => {
  switch (endpoint) {
    case 'members':
      return { url: `${base}/v1/orgs/${org.org_id}/members?limit=1`, headers: auth };
    case 'media':
      return { url: `${base}/v1/media?limit=10`, headers: auth };
    case 'datasets':
      return { url: `${base}/v1/datasets`, headers: auth };
    case 'query':
      return { url: `${base}/v1/query`, method: 'POST', body: JSON.stringify({ q: 'dataset:game' }), headers: { ...auth, 'content-type': 'application/json' } };
    case 'tokens':
      return { url: `${base}/v1/tokens`, method: 'POST', body: JSON.stringify({ name: 'bench', scopes: ['media:read'] }), headers: { ...auth, 'content-type': 'application/json' } };
  }
};

/**
 * The baseline checkout's server on a data dir of its own (its migrations are its own), with the
 * token its `opsctl init` printed: the tokens row's request, against the code before the change.
 */
async function baselineServer(dir: string): Promise<{ started: Started; target: Target }> {
  const data = tempDir('bench-http-baseline-');
  copies.push(data); // removed with the others at the end
  const init = spawn(process.execPath, ['bin/opsctl.js', 'init', '--json'], { cwd: dir, env: { ...process.env, ...serverEnv, OPS_DATA_DIR: data }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  init.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  await new Promise((resolve) => init.once('exit', resolve));
  const { token: baselineToken } = JSON.parse(out) as { token: string };
  const port = await freePort();
  const started = await startOpsctl({
    args: ['serve'],
    cwd: dir,
    env: { ...serverEnv, OPS_DATA_DIR: data, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()) },
    ready: `http://127.0.0.1:${port}/healthz`,
  });
  const target = targetOf('tokens', `http://127.0.0.1:${port}`);
  return { started, target: { ...target, headers: { ...target.headers, authorization: `Bearer ${baselineToken}` } } };
}

/** The answer our server gives a target once (status, the headers a client sees, body), for the replay peer. */
async function capture(target: Target): Promise<Captured> {
  const r = await fetch(target.url, { method: target.method ?? 'GET', headers: target.headers, ...(target.body === undefined ? {} : { body: target.body }) });
  const body = await r.text();
  if (!r.ok) throw new Error(`${target.url}: ${r.status} ${body}`);
  // Hop-by-hop headers and Date are node:http's own; the length is the replayed body's.
  const skip = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  const headers = Object.fromEntries([...r.headers].filter(([name]) => !skip.has(name)));
  const url = new URL(target.url);
  return { method: target.method ?? 'GET', path: url.pathname + url.search, status: r.status, headers, body };
}
const servers: Started[] = [];
interface Row {
  label: string;
  /** the endpoint this row measures (the members rows of the first table: 'members') */
  endpoint: EndpointName;
  target: Target;
  cpu: CpuReading;
  redis?: Redis;
  runs: Figures[];
}
const rows: Row[] = [];
try {
  const ours = await server(dataDir, ['serve']);
  servers.push(ours.started);
  const withWorkers = await server(copies[0]!, ['serve', '--workers', String(workers)]);
  servers.push(withWorkers.started);
  const withRedis = useRedis ? await server(copies[1]!, ['serve', '--workers', String(workers)], { OPS_REDIS_URL: redisUrl }) : undefined;
  if (withRedis) servers.push(withRedis.started);
  // The tokens row reads nothing: its server is left as empty as the baseline checkout's, so
  // neither carries background work (the events loader, rollups) the other does not.
  const heavy = endpoints.filter((e) => e !== 'members' && e !== 'tokens');
  if (heavy.length) await Promise.all([seedHeavyEndpoints(auth, ours.base), seedHeavyEndpoints(auth, withWorkers.base)]);
  // The answers to replay, from the one-process server (the workers' differ only in ids and times).
  for (const endpoint of endpoints) captured.set(endpoint, await capture(targetOf(endpoint, ours.base)));
  fs.writeFileSync(replayFile, JSON.stringify([...captured.values()]));
  replay = killOnExit(spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts', String(replayPort), 'replay', replayFile], { stdio: 'inherit' }));
  await new Promise((r) => setTimeout(r, 1000));

  const onePid = (pid: number) => () => new Map([[pid, cpuMicros(pid)]]);
  const members = (base: string) => targetOf('members', base);
  if (endpoints.includes('members')) {
    rows.push({ label: 'bare', endpoint: 'members', target: { url: `http://127.0.0.1:${barePort}/bare`, headers: {} }, cpu: onePid(bare.pid!), runs: [] });
    rows.push({ label: 'floor', endpoint: 'members', target: members(`http://127.0.0.1:${floorPort}`), cpu: onePid(floor.pid!), runs: [] });
    rows.push({ label: 'ours', endpoint: 'members', target: members(ours.base), cpu: () => groupCpuMicros(ours.started.pgid), runs: [] });
    rows.push({ label: 'workers', endpoint: 'members', target: members(withWorkers.base), cpu: () => groupCpuMicros(withWorkers.started.pgid), runs: [] });
    if (withRedis) rows.push({ label: 'redis', endpoint: 'members', target: members(withRedis.base), cpu: () => groupCpuMicros(withRedis.started.pgid), redis, runs: [] });
  }
  for (const endpoint of endpoints) {
    rows.push({ label: 'replay', endpoint, target: targetOf(endpoint, `http://127.0.0.1:${replayPort}`), cpu: onePid(replay.pid!), runs: [] });
    if (endpoint === 'members') continue; // ours and --workers: the members rows above
    if (endpoint === 'tokens' && baselineDir) {
      const baseline = await baselineServer(baselineDir);
      servers.push(baseline.started);
      rows.push({ label: 'baseline', endpoint, target: baseline.target, cpu: () => groupCpuMicros(baseline.started.pgid), runs: [] });
      // This checkout set up and started exactly as the baseline is (opsctl init's data dir and
      // token): the goal compares these two. The 'ours' row's server, seeded by this script with
      // its own token, read 15–40% more than the baseline with the same code in it (an A/A run).
      const twin = await baselineServer(process.cwd());
      servers.push(twin.started);
      rows.push({ label: 'twin', endpoint, target: twin.target, cpu: () => groupCpuMicros(twin.started.pgid), runs: [] });
    }
    rows.push({ label: 'ours', endpoint, target: targetOf(endpoint, ours.base), cpu: () => groupCpuMicros(ours.started.pgid), runs: [] });
    rows.push({ label: 'workers', endpoint, target: targetOf(endpoint, withWorkers.base), cpu: () => groupCpuMicros(withWorkers.started.pgid), runs: [] });
  }

  // Warm every server (JIT, SQLite page cache) before measuring; a failing server stops the bench
  // here. Node's cluster hands each new connection to the workers in turn: both must be serving.
  for (const row of rows) {
    const warm = await load(row.target, row.cpu, row.redis, 2);
    if (row.label === 'workers' || row.label === 'redis') {
      const busy = warm.processCores.filter((cores) => cores > 0.05).length;
      if (busy < workers) throw new Error(`${row.label}: only ${busy} of the ${workers} workers served the warm-up (${warm.processCores.map((c) => fmt(c, 2)).join(' + ')} cores)`);
    }
  }
  for (let i = 0; i < rounds; i++) {
    // Alternate so drift in machine load hits all alike.
    // Every other round in reverse: a row is not always measured right after the same one.
    for (const row of i % 2 ? [...rows].reverse() : rows) row.runs.push(await load(row.target, row.cpu, row.redis));
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  bare.kill('SIGTERM');
  floor.kill('SIGTERM');
  replay?.kill('SIGTERM');
  redis?.disconnect();
  for (const dir of [dataDir, floorDir, ...copies]) fs.rmSync(dir, { recursive: true, force: true });
}

const summary = (runs: Figures[]) => ({
  rps: median(runs.map((r) => r.rps)),
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  cpu: median(runs.map((r) => r.cpu)),
  clientCpu: median(runs.map((r) => r.clientCpu)),
  clientCores: median(runs.map((r) => r.clientCores)),
  processCores: runs[0]!.processCores.map((_, i) => median(runs.map((r) => r.processCores[i] ?? 0))),
  /** what else ran on the machine meanwhile: its busy CPU less this server's and the client's, in cores */
  otherCores: median(runs.map((r) => r.machineCores - r.processCores.reduce((a, c) => a + c, 0) - r.clientCores)),
  stealCores: median(runs.map((r) => r.stealCores)),
  redisCpu: median(runs.map((r) => r.redis?.cpu ?? NaN)),
  redisCommands: median(runs.map((r) => r.redis?.commands ?? NaN)),
});
const byLabel = (label: string, endpoint: EndpointName = 'members') => {
  const row = rows.find((r) => r.label === label && r.endpoint === endpoint);
  return row ? summary(row.runs) : undefined;
};
const client =
  loadClient === 'wrk'
    ? 'wrk (one thread, its own process; BENCH_LOAD_CLIENT=autocannon for the earlier client)'
    : clientWorkers > 0
      ? `autocannon in ${clientWorkers} worker threads of this script's process`
      : 'autocannon in the same process as this script';
console.log(`\nbench:http — ${rounds} rounds × ${seconds}s, ${connections} connections, ${client}, medians`);
console.log(`machine: ${os.cpus().length} cores, node ${process.version}; server log level ${process.env.OPS_LOG_LEVEL ?? 'warn'}`);
// The members rows against the bare Fastify route and the floor (BENCH_ENDPOINTS without members leaves them out).
if (endpoints.includes('members')) {
  const b = byLabel('bare')!;
  const f = byLabel('floor')!;
  const o = byLabel('ours')!;
  const w = byLabel('workers')!;
  const r = byLabel('redis');
  const line = (label: string, s: ReturnType<typeof summary>, note: string) =>
    console.log(
      `  ${label.padEnd(28)} ${fmt(s.rps).padStart(8)} req/s   p50 ${fmt(s.p50, 1)} ms   p99 ${fmt(s.p99, 1)} ms   server CPU ${fmt(s.cpu, 1)} µs/request` +
        `   cores busy: server ${s.processCores.map((c) => fmt(c, 2)).join(' + ')}, client ${fmt(s.clientCores, 2)}, rest of the machine ${fmt(s.otherCores, 2)} (stolen ${fmt(s.stealCores, 2)})   ${note}`,
    );
  line('bare Fastify route', b, '');
  line("bare + the contract's least", f, '(logger, schemas, token hash, 4 headers, change check)');
  line('GET members, one process', o, '(token lookup, scope, rate limit, SQLite query)');
  line(`GET members, --workers ${workers}`, w, '(primary with the events node + workers; per-process rate limit)');
  if (r) line(`  + OPS_REDIS_URL limiter`, r, `(Redis: ${fmt(r.redisCpu, 1)} µs CPU and ${fmt(r.redisCommands, 2)} commands per request)`);
  console.log(`  one process / bare           ${fmt((o.rps / b.rps) * 100, 1)}% of the throughput   (goal ≥ 70%; the single-process floor was ~55%)`);
  console.log(`  --workers ${workers} / bare           ${fmt((w.rps / b.rps) * 100, 1)}%   (goal ≥ 70%)`);
  if (r) console.log(`  --workers ${workers} + Redis / bare   ${fmt((r.rps / b.rps) * 100, 1)}%`);
  console.log(`  floor / bare                 ${fmt((f.rps / b.rps) * 100, 1)}%   (what the contract leaves a single-process implementation here)`);
  console.log(`  one process / floor          ${fmt((o.rps / f.rps) * 100, 1)}%`);
  // The client shares the machine's two cores and the host steals time: throughput swings between
  // runs; CPU per request is the steadier figure of what each server costs.
  console.log(`  CPU per request bare / ours  ${fmt((b.cpu / o.cpu) * 100, 1)}% (one process), ${fmt((b.cpu / w.cpu) * 100, 1)}% (--workers ${workers})`);
  // What serving from every core could reach at best: the server's CPU per request plus the
  // client's (it shares the cores), spread perfectly over all cores at no cost. The client is
  // counted at its cheapest, as it runs against the bare route (it costs more against a slower
  // server, which finds it asleep more often and must wake it).
  const cores = os.availableParallelism();
  const ceiling = (server: number) => (cores * 1e6) / (server + b.clientCpu);
  console.log(`  client (${loadClient}) CPU      ${fmt(b.clientCpu, 1)} µs/request against bare, ${fmt(f.clientCpu, 1)} against the floor, ${fmt(o.clientCpu, 1)} against ours, ${fmt(w.clientCpu, 1)} against --workers ${workers}`);
  console.log(
    `  ideal use of all ${cores} cores     ours ≤ ${fmt((ceiling(o.cpu) / b.rps) * 100, 1)}% of bare, --workers ${workers} ≤ ${fmt((ceiling(w.cpu) / b.rps) * 100, 1)}%, floor ≤ ${fmt((ceiling(f.cpu) / b.rps) * 100, 1)}%` +
      `   (${cores} cores / (server + client CPU per request))`,
  );
  // The load generator is not free: with --workers it is a third busy thread beside the two workers,
  // and whatever else runs on this machine takes its share too.
  const busyCores = (s: ReturnType<typeof summary>) => s.processCores.reduce((a, c) => a + c, 0) + s.clientCores + s.otherCores;
  console.log(
    `  note: ${loadClient} runs on the same ${cores} cores as the server under test, as does whatever else this machine runs; cores busy in all: ` +
      `${fmt(busyCores(b), 2)} of ${cores} during the bare row, ${fmt(busyCores(w), 2)} during --workers ${workers}. ` +
      (busyCores(w) > cores - 0.15
        ? `The machine was saturated: --workers ${workers} could only gain CPU from the client and the rest of the machine, so its ratio to bare here says little ` +
          `of a machine with a core to spare; "ideal use" above is the bound.`
        : `${workers} workers and the client want ${workers + 1} cores where ${cores} exist: the --workers row is a lower bound of ${workers} workers on cores of their own.`) +
      ` (BENCH_CLIENT_WORKERS=N moves autocannon into N threads: more client CPU per request on the same ${cores} cores.)`,
  );
}

// The cost of a request: each endpoint beside a bare node:http process
// answering the same bytes, in the same run. CPU per request is the figure the goals are set
// on (the steadier one here); throughput is printed beside it.
console.log(`\nthe cost of a request — each endpoint beside a bare node:http process replaying our answer's bytes (same run, medians)`);
const goals = { cpu: (e: EndpointName) => (e === 'members' ? 2 : 3), rps: 0.35, workers: 1.6 };
for (const endpoint of endpoints) {
  const bare = byLabel('replay', endpoint)!;
  const one = byLabel('ours', endpoint)!;
  const two = byLabel('workers', endpoint)!;
  const target = targetOf(endpoint, '');
  console.log(`  ${target.method ?? 'GET'} ${target.url}${target.body ? ` ${target.body}` : ''} (answer ${fmt(Buffer.byteLength(captured.get(endpoint)!.body))} bytes)`);
  const brief = (label: string, s: ReturnType<typeof summary>) =>
    console.log(
      `    ${label.padEnd(20)} ${fmt(s.rps).padStart(8)} req/s   p50 ${fmt(s.p50, 1)} ms   p99 ${fmt(s.p99, 1)} ms   server CPU ${fmt(s.cpu, 1).padStart(7)} µs/request` +
        `   cores busy: server ${s.processCores.map((c) => fmt(c, 2)).join(' + ')}, client ${fmt(s.clientCores, 2)}, rest of the machine ${fmt(s.otherCores, 2)}`,
    );
  brief('bare node:http', bare);
  const baseline = byLabel('baseline', endpoint);
  const twin = byLabel('twin', endpoint);
  if (baseline) brief('baseline checkout', baseline);
  if (twin) brief('ours, set up as baseline', twin);
  brief('ours, one process', one);
  brief(`ours, --workers ${workers}`, two);
  if (baseline && twin) {
    // The audit entry written with each token creation, against the code before it,
    // both servers set up alike.
    const more = twin.cpu / baseline.cpu - 1;
    console.log(`    CPU per request (set up as baseline) ${fmt(more * 100, 1)}% more than the baseline checkout (${baselineDir}) (goal ≤ 5%: ${more <= 0.05 ? 'met' : 'missed'})`);
  }
  const met = (ok: boolean) => (ok ? 'met' : 'missed');
  const cpuRatio = one.cpu / bare.cpu;
  const rpsRatio = one.rps / bare.rps;
  const scale = two.rps / one.rps;
  console.log(
    `    CPU per request ${fmt(cpuRatio, 2)}× bare (goal ≤ ${goals.cpu(endpoint)}×: ${met(cpuRatio <= goals.cpu(endpoint))});` +
      ` one process ${fmt(rpsRatio * 100, 1)}% of bare req/s (goal ≥ ${goals.rps * 100}%: ${met(rpsRatio >= goals.rps)});` +
      ` --workers ${workers} ${fmt(scale, 2)}× one process (goal ≥ ${goals.workers}×: ${met(scale >= goals.workers)})`,
  );
}
