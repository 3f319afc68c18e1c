// tsx bench/http-ab.ts — an A/B of two builds on bench:http's endpoints, for a machine shared with
// other work, where the same code's CPU per request moves by 2× between minutes: A (a built
// checkout at BENCH_BASELINE, e.g. `git archive main | tar -x -C DIR`, node_modules linked,
// `npm run build` there) and B (this checkout, built) each serve a copy of one data dir seeded as
// bench:http seeds it, beside the bare node:http replay of B's answers (bench/bare-server.ts);
// wrk (one thread, 32 connections) rounds of BENCH_SECONDS alternate the order of the rows, and
// each round prints B ÷ A and each ÷ the replay of server CPU per request (/proc, every process
// of the server). Medians of the per-round ratios at the end.
//   BENCH_BASELINE=/tmp/base BENCH_ENDPOINTS=members,media BENCH_ROUNDS=14 BENCH_SECONDS=2 npx tsx bench/http-ab.ts
//   BENCH_WORKERS=2: each server with --workers 2 (per-process CPU printed for B);
//   BENCH_ONLY=B: B and the replay alone; BENCH_PROFILE=DIR: B runs with bench/inspector-profile.mjs
//   (PROF_DIR=DIR too), profiled over the measured rounds (npx tsx bench/cpu-profile-summary.ts DIR).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { cpuSince, seedHeavyEndpoints, freePort, groupCpuMicros, killOnExit, median, startOpsctl, tcpReachable, tempDir, type Captured, type Started } from './support.js';

const base = process.env.BENCH_BASELINE ?? '';
const endpoints = (process.env.BENCH_ENDPOINTS ?? 'members').split(',');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const workers = Number(process.env.BENCH_WORKERS ?? 0);
const prof = process.env.BENCH_PROFILE;
const only = process.env.BENCH_ONLY;
if (!base && only !== 'B') throw new Error('BENCH_BASELINE=DIR: a built checkout to compare with (or BENCH_ONLY=B)');

const secret = crypto.randomBytes(32).toString('base64');
const dataDir = tempDir('bench-ab-');
const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir, OPS_SECRET_KEY: secret }), systemClock);
const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'pro', ownerEmail: 'bench@example.com' });
for (let i = 0; i < 20; i++) await ctx.orgs.addMember({ orgId: org.org_id, email: `m${i}@example.com`, role: 'Developer' });
const { token } = await ctx.tokens.create({ tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' }, name: 'bench', scopes: parseScopes('all'), expiresAt: null });
await ctx.close();
const auth = { authorization: `Bearer ${token}` };
const copy = tempDir('bench-ab-b-');
fs.cpSync(dataDir, copy, { recursive: true });

interface Target { url: string; method?: string; body?: string; headers: Record<string, string> }
const targetOf = (endpoint: string, b: string): Target => {
  switch (endpoint) {
    case 'members':
      return { url: `${b}/v1/orgs/${org.org_id}/members?limit=1`, headers: auth };
    case 'media':
      return { url: `${b}/v1/media?limit=10`, headers: auth };
    case 'datasets':
      return { url: `${b}/v1/datasets`, headers: auth };
    case 'query':
      return { url: `${b}/v1/query`, method: 'POST', body: JSON.stringify({ q: 'dataset:game' }), headers: { ...auth, 'content-type': 'application/json' } };
    case 'tokens':
      return { url: `${b}/v1/tokens`, method: 'POST', body: JSON.stringify({ name: 'bench', scopes: ['media:read'] }), headers: { ...auth, 'content-type': 'application/json' } };
    default:
      throw new Error(endpoint);
  }
};

async function server(dir: string, cwd: string, nodeArgs?: string): Promise<{ started: Started; base: string }> {
  const port = await freePort();
  const saved = process.env.BENCH_NODE_ARGS;
  if (nodeArgs) process.env.BENCH_NODE_ARGS = nodeArgs;
  else delete process.env.BENCH_NODE_ARGS;
  const started = await startOpsctl({
    args: workers ? ['serve', '--workers', String(workers)] : ['serve'],
    cwd,
    env: { OPS_SECRET_KEY: secret, OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000', OPS_DATA_DIR: dir, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()) },
    ready: `http://127.0.0.1:${port}/healthz`,
  });
  if (saved === undefined) delete process.env.BENCH_NODE_ARGS;
  else process.env.BENCH_NODE_ARGS = saved;
  return { started, base: `http://127.0.0.1:${port}` };
}

function wrk(target: Target, duration: number): number {
  const file = path.join(os.tmpdir(), `bench-ab-${crypto.randomBytes(4).toString('hex')}.lua`);
  const lines = [`wrk.method = ${JSON.stringify(target.method ?? 'GET')}`];
  for (const [k, v] of Object.entries(target.headers)) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  if (target.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(target.body)}`);
  lines.push('done = function(summary) io.write(string.format("REQ %d %d %d\\n", summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status)) end');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  try {
    const out = execFileSync('wrk', ['-t1', '-c32', '--timeout', '10s', `-d${duration}s`, '-s', file, target.url], { encoding: 'utf8' });
    const m = /REQ (\d+) (\d+) (\d+)/.exec(out)!;
    if (Number(m[2]) || Number(m[3])) throw new Error(`errors: ${out}`);
    return Number(m[1]);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

const cpuOfPid = (pid: number) => () => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return new Map([[pid, ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100]]);
};

const servers: Started[] = [];
let replay: ReturnType<typeof spawn> | undefined;
try {
  const A = only === 'B' ? undefined : await server(dataDir, base);
  const B = await server(copy, process.cwd(), prof ? `--import ${process.cwd()}/bench/inspector-profile.mjs` : undefined);
  if (A) servers.push(A.started);
  servers.push(B.started);
  if (endpoints.some((e) => e !== 'members')) await Promise.all([A ? seedHeavyEndpoints(auth, A.base) : undefined, seedHeavyEndpoints(auth, B.base)]);
  const captured: Captured[] = [];
  for (const e of endpoints) {
    const t = targetOf(e, B.base);
    const r = await fetch(t.url, { method: t.method ?? 'GET', headers: t.headers, ...(t.body ? { body: t.body } : {}) });
    const body = await r.text();
    if (!r.ok) throw new Error(`${e}: ${r.status} ${body}`);
    const skip = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
    const u = new URL(t.url);
    captured.push({ method: t.method ?? 'GET', path: u.pathname + u.search, status: r.status, headers: Object.fromEntries([...r.headers].filter(([n]) => !skip.has(n))), body });
  }
  const replayFile = path.join(copy, 'captured.json');
  fs.writeFileSync(replayFile, JSON.stringify(captured));
  const replayPort = await freePort();
  replay = killOnExit(spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts', String(replayPort), 'replay', replayFile], { stdio: 'inherit' }));
  for (let i = 0; i < 100 && !(await tcpReachable('127.0.0.1', replayPort)); i++) await new Promise((r) => setTimeout(r, 200));
  const rows: { label: string; endpoint: string; target: Target; cpu: () => Map<number, number>; results: { cpu: number; rps: number }[] }[] = [];
  for (const e of endpoints) {
    rows.push({ label: 'replay', endpoint: e, target: targetOf(e, `http://127.0.0.1:${replayPort}`), cpu: cpuOfPid(replay.pid!), results: [] });
    if (A) rows.push({ label: 'A', endpoint: e, target: targetOf(e, A.base), cpu: () => groupCpuMicros(A.started.pgid), results: [] });
    rows.push({ label: 'B', endpoint: e, target: targetOf(e, B.base), cpu: () => groupCpuMicros(B.started.pgid), results: [] });
  }
  for (const row of rows) wrk(row.target, 2);
  if (prof) fs.writeFileSync(`${prof}/start`, '');
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 ? [...rows].reverse() : rows;
    for (const row of order) {
      const before = row.cpu();
      const t0 = performance.now();
      const n = wrk(row.target, seconds);
      const wall = (performance.now() - t0) / 1000;
      const byPid = cpuSince(before, row.cpu());
      const used = [...byPid.values()].reduce((a, b) => a + b, 0);
      row.results.push({ cpu: used / n, rps: n / wall });
      if (workers && row.label === 'B') console.log(`  ${row.endpoint} B per process µs/request: ${[...byPid].map(([pid, us]) => `${pid}:${(us / n).toFixed(1)}`).join(' ')} rps ${(n / wall).toFixed(0)}`);
    }
    const load = os.loadavg()[0]!.toFixed(1);
    const parts = endpoints.map((e) => {
      const get = (l: string) => rows.find((r) => r.label === l && r.endpoint === e)?.results[i];
      const r = get('replay')!;
      const a = get('A');
      const b = get('B')!;
      return `${e}: replay ${r.cpu.toFixed(1)}µs ${a ? `A ${a.cpu.toFixed(1)} (${(a.cpu / r.cpu).toFixed(2)}×) ` : ''}B ${b.cpu.toFixed(1)} (${(b.cpu / r.cpu).toFixed(2)}×)${a ? ` B/A ${(b.cpu / a.cpu).toFixed(3)}` : ''} rps B/replay ${((100 * b.rps) / r.rps).toFixed(0)}%`;
    });
    console.log(`round ${i + 1} (load ${load}): ${parts.join(' | ')}`);
  }
  if (prof) {
    fs.writeFileSync(`${prof}/stop`, '');
    await new Promise((r) => setTimeout(r, 3000));
  }
  console.log('medians:');
  for (const e of endpoints) {
    const get = (l: string) => rows.find((r) => r.label === l && r.endpoint === e)?.results;
    const r = get('replay')!;
    const a = get('A');
    const b = get('B')!;
    const ratio = (x: { cpu: number }[]) => median(x.map((v, i) => v.cpu / r[i]!.cpu));
    console.log(
      `  ${e}: replay ${median(r.map((x) => x.cpu)).toFixed(1)} µs; ${a ? `A ${median(a.map((x) => x.cpu)).toFixed(1)} µs = ${ratio(a).toFixed(2)}× replay; ` : ''}B ${median(b.map((x) => x.cpu)).toFixed(1)} µs = ${ratio(b).toFixed(2)}× replay` +
        `${a ? `; B/A ${median(b.map((x, i) => x.cpu / a[i]!.cpu)).toFixed(3)}; rps A ${median(a.map((x, i) => x.rps / r[i]!.rps) ).toFixed(2)}` : ''}; rps B/replay ${median(b.map((x, i) => x.rps / r[i]!.rps)).toFixed(2)}`,
    );
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  replay?.kill('SIGTERM');
  for (const d of [dataDir, copy]) fs.rmSync(d, { recursive: true, force: true });
}
