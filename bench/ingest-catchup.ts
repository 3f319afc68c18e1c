// npx tsx bench/ingest-catchup.ts (npm run build first) — the events loader at full loads, measured
// the same way however fast the machine is: BENCH_CATCHUP_EVENTS realistic events (500,000; 8
// tenants, 1,000 per record, as bench:ingest's realistic shape) are written to the event log of a
// data directory by this script, then a server starts on a copy of it and loads them back to back
// (50,000-event loads) before /readyz answers. Prints, per run, the server's peak RSS (VmHWM) and
// its CPU to that moment (start-up included: BENCH_CATCHUP_EVENTS=20000 shows what start-up
// costs). BENCH_BASELINE=DIR alternates with another built checkout, rounds of both
// (BENCH_ROUNDS, 3), and prints the medians. docs/benchmarks.md, "Running the benches".
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { v7 } from 'uuid';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { WriteAheadLog } from '../src/engine/wal/wal.js';
import { encodeBatch } from '../src/engine/wal/event-batch.js';
import type { NewEvent } from '../src/engine/event-store.js';
import type { Tenant } from '../src/tenancy/tenant.js';
import { fmt, freePort, median, tempDir } from './support.js';

const total = Number(process.env.BENCH_CATCHUP_EVENTS ?? 500_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const baseline = process.env.BENCH_BASELINE;

/** A data directory with 8 tenants and `total` events in its log, none loaded. */
async function backlog(): Promise<string> {
  const dir = tempDir('bench-catchup-');
  const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dir }), systemClock);
  const tenants: Tenant[] = [];
  for (let o = 0; o < 4; o++) {
    const org = await ctx.orgs.createOrg({ name: `Bench ${o}`, plan: 'enterprise', ownerEmail: `bench${o}@example.com` });
    tenants.push({ orgId: org.org_id, projectId: org.project_id, mode: 'live' });
    tenants.push({ orgId: org.org_id, projectId: (await ctx.orgs.createProject(org.org_id, 'second')).project_id, mode: 'live' });
  }
  await ctx.close();
  const gameEvents = ['player_join', 'player_leave', 'match_start', 'round_end', 'kill', 'purchase', 'chat_message'];
  const maps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass', 'vertigo', 'ancient'];
  const regions = ['eu-west-1', 'us-east-2', 'ap-south-1', 'sa-east-1'];
  const { wal } = WriteAheadLog.open({ dir: path.join(dir, 'events', 'wal'), segmentBytes: 64 * 1024 * 1024, loadedSeq: 0 });
  const base = Date.now() - 3_600_000;
  for (let b = 0; b * 1000 < total; b++) {
    const events: NewEvent[] = [];
    for (let i = 0; i < 1000; i++) {
      const n = b * 1000 + i;
      const payload = JSON.stringify({ map: maps[n % maps.length], ping: (n * 13) % 250, player_id: `p_${String((n * 7919) % 50000).padStart(10, '0')}`, round: n % 30 });
      events.push({ datasetId: 'ds_01JDZQ4X0000000000000000AB', eventId: v7(), clientEventId: false, ts: base + n * 3, severity: i % 10 === 0 ? 2 : 1, bytesRaw: 211, event: gameEvents[n % gameEvents.length]!, actor: `player-${(n * 7919) % 50000}`, source: `game-server/${regions[n % regions.length]}/node-${n % 16}`, message: '', payload });
    }
    await wal.append(encodeBatch(tenants[b % tenants.length]!, Date.now(), events), events.length);
  }
  await wal.close();
  return dir;
}

/** One server (the build in `cwd`) on a copy of `source` until it has loaded the backlog. */
async function catchUp(source: string, cwd: string): Promise<{ peakMb: number; cpuSeconds: number; seconds: number }> {
  const dir = tempDir('bench-catchup-run-');
  execFileSync('cp', ['-r', `${source}/.`, dir]);
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, ['--max-semi-space-size=8', '--heap-growing-percent=50', 'bin/opsctl.js', 'serve'], {
    cwd,
    env: { ...process.env, OPS_HOST: '127.0.0.1', OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), OPS_DATA_DIR: dir, OPS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    // No bound on the wait: on a loaded machine the catch-up took over two minutes.
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server in ${cwd} exited with ${child.exitCode}`);
      if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return { peakMb: Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024, cpuSeconds: (Number(stat[11]) + Number(stat[12])) / 100, seconds };
  } finally {
    await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const source = await backlog();
const builds: Array<[string, string]> = [['this checkout', process.cwd()], ...(baseline ? [['baseline', baseline] as [string, string]] : [])];
const runs = new Map<string, Array<{ peakMb: number; cpuSeconds: number }>>();
try {
  for (let r = 0; r < rounds; r++) {
    for (const [name, cwd] of r % 2 ? [...builds].reverse() : builds) {
      const run = await catchUp(source, cwd);
      console.log(`${name.padEnd(14)} peak RSS ${fmt(run.peakMb)} MB, CPU ${fmt(run.cpuSeconds, 2)} s (start-up included), ${fmt(run.seconds, 1)} s to ready, load average ${fmt(os.loadavg()[0]!, 1)}`);
      runs.set(name, [...(runs.get(name) ?? []), run]);
    }
  }
} finally {
  fs.rmSync(source, { recursive: true, force: true });
}
console.log(`\ncatch-up of ${fmt(total)} events, medians of ${rounds} runs`);
for (const [name, rs] of runs) console.log(`  ${name.padEnd(14)} peak RSS ${fmt(median(rs.map((x) => x.peakMb)))} MB, CPU ${fmt(median(rs.map((x) => x.cpuSeconds)), 2)} s`);
