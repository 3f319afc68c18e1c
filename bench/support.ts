import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { png } from '../src/test-support/media/test-files.js';
import { freePort } from '../src/test-support/test-process.js';

export { freePort };

export const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/** Starts `opsctl serve` as its own process and waits for /healthz. */
export async function spawnServer(env: Record<string, string>): Promise<{ child: ChildProcess; apiUrl: string; cdnUrl: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const cdnPort = await freePort();
  // The compiled build (npm run build), as production runs it: no TypeScript loader in the process.
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server under load.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // The flags of `npm start` and of bin/opsctl.js's shebang.
  const child = spawn(process.execPath, ['--max-semi-space-size=8', '--heap-growing-percent=50', ...nodeArgs, 'bin/opsctl.js', 'serve'], {
    env: { ...process.env, OPS_HOST: '127.0.0.1', OPS_PORT: String(port), OPS_CDN_PORT: String(cdnPort), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const apiUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${apiUrl}/healthz`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    child,
    apiUrl,
    cdnUrl: `http://127.0.0.1:${cdnPort}`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** One answer of our server, captured once by bench/http.ts for bench/bare-server.ts's replay peer. */
export interface Captured {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** What a bench started and has not stopped yet: process groups (startOpsctl) and single processes (killOnExit). */
const liveGroups = new Set<number>();
const livePids = new Set<number>();
let reaperInstalled = false;

/** SIGKILLs every process group and process still running (a leader and its workers alike); synchronous, for 'exit'. */
export function killStarted(): void {
  for (const target of [...[...liveGroups].map((pgid) => -pgid), ...livePids]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  liveGroups.clear();
  livePids.clear();
}

/** Kills `child` when the bench exits, however it exits, unless it has exited by then. */
export function killOnExit(child: ChildProcess): ChildProcess {
  installReaper();
  const pid = child.pid!;
  livePids.add(pid);
  child.once('exit', () => livePids.delete(pid));
  return child;
}

function installReaper() {
  if (reaperInstalled) return;
  reaperInstalled = true;
  // 'exit' also runs after an uncaught error or a rejected top-level await; Ctrl-C and SIGTERM
  // reach only this process (the servers have process groups of their own), so they exit through it.
  process.on('exit', killStarted);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(130));
}

export interface Started {
  child: ChildProcess;
  /** The process group's id (the leader's pid): `opsctl serve --workers N`'s primary, its workers and nothing else. */
  pgid: number;
  /** SIGTERM to the leader, then (after `graceMs` or once it exits) SIGKILL to whatever of its group is left. */
  stop: (graceMs?: number) => Promise<void>;
}

/**
 * `opsctl ARGS` as its own process group, waiting until `ready` answers (`readyWhen: 'ok'`: a 2xx;
 * 'any': any HTTP answer, for the events node). `build`: 'dist' runs the compiled build with the
 * flags of `npm start` (as spawnServer), 'source' runs src/cli/main.ts through tsx (as bench:tail
 * always has). Every process of the group is killed when the bench exits, however it exits.
 */
/** `cwd`: another built checkout whose bin/opsctl.js runs (bench:http's BENCH_BASELINE). */
export async function startOpsctl(options: { args: string[]; env: Record<string, string>; ready: string; readyWhen?: 'ok' | 'any'; build?: 'dist' | 'source'; cwd?: string }): Promise<Started> {
  installReaper();
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const entry = (options.build ?? 'dist') === 'dist' ? ['--max-semi-space-size=8', '--heap-growing-percent=50', ...nodeArgs, 'bin/opsctl.js'] : ['--import', 'tsx', ...nodeArgs, 'src/cli/main.ts'];
  const child = spawn(process.execPath, [...entry, ...options.args], {
    env: { ...process.env, OPS_HOST: '127.0.0.1', OPS_LOG_LEVEL: process.env.OPS_LOG_LEVEL ?? 'warn', ...options.env },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const pgid = child.pid!;
  liveGroups.add(pgid);
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      // A server that dies mid-bench (a native crash prints nothing) shows only as the bench's ECONNRESET otherwise.
      if (!stopping) console.error(`opsctl ${options.args.join(' ')} exited by itself: code ${code}, signal ${signal}`);
      resolve();
    }),
  );
  const stop = async (graceMs = 15_000) => {
    stopping = true;
    if (!liveGroups.has(pgid)) return;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs).unref())]);
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // the whole group has exited
    }
    liveGroups.delete(pgid);
  };
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    const answered = await fetch(options.ready).then(
      (r) => (options.readyWhen === 'any' || r.ok ? true : false),
      () => false,
    );
    if (answered) return { child, pgid, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop(0);
  throw new Error(`opsctl ${options.args.join(' ')} did not answer ${options.ready}`);
}

/** CPU time (user + system, all threads) each live process of a process group has used so far, in µs, by pid (Linux /proc). */
export function groupCpuMicros(pgid: number): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // After "pid (comm) ": state, ppid, pgrp, …; utime and stime are fields 14 and 15 of stat.
      const fields = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(fields[2]) !== pgid) continue;
      byPid.set(Number(entry), ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100); // clock ticks of 10 ms
    } catch {
      // exited meanwhile
    }
  }
  return byPid;
}

/**
 * CPU time (µs) of a process group's threads by kind: `main` (each process's own thread: the
 * event loop), `events` (threads named ops-events: the events worker and the DuckDB threads it
 * starts, which inherit its name) and `other` (libuv's pool — where DuckDB statements are
 * driven from — and V8's helpers). Where an evaluation's CPU goes, on which thread (Linux /proc).
 */
export function groupThreadCpuMicros(pgid: number): { main: number; events: number; other: number } {
  const sum = { main: 0, events: 0, other: 0 };
  for (const pid of groupCpuMicros(pgid).keys()) {
    let tids: string[];
    try {
      tids = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
        const us = ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
        sum[Number(tid) === pid ? 'main' : comm === 'ops-events' ? 'events' : 'other'] += us;
      } catch {
        // exited meanwhile
      }
    }
  }
  return sum;
}

/** The CPU time a process group's processes used between two groupCpuMicros readings, by pid. */
export const cpuSince = (before: Map<number, number>, after: Map<number, number>) => new Map([...after].map(([pid, us]) => [pid, us - (before.get(pid) ?? 0)]));

/** Whether something accepts TCP connections at host:port within 500 ms. */
export function tcpReachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * What the heavier endpoints read, put through the server's API: 10 media files, and three
 * datasets of 1,000 events each over the last 17 minutes, shaped like a game's events (a
 * payload of five keys, one nested).
 */
export async function seedHeavyEndpoints(auth: Record<string, string>, base: string): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(png())], { type: 'image/png' }), `screenshot-${i}.png`);
    form.append('folder', 'screenshots');
    form.append('tags', 'bench');
    const r = await fetch(`${base}/v1/media`, { method: 'POST', headers: auth, body: form });
    if (r.status !== 201) throw new Error(`seed upload: ${r.status} ${await r.text()}`);
  }
  const now = Date.now();
  for (const name of ['game', 'auth', 'matchmaking']) {
    const events = Array.from({ length: 1000 }, (_, i) => ({
      ts: now - i * 1000,
      severity: ['info', 'warn', 'error'][i % 3],
      event: ['match_start', 'login', 'purchase'][i % 3],
      actor: `user_${i % 50}`,
      source: `server-${i % 4}`,
      message: `player user_${i % 50} joined match ${i}`,
      payload: { map: ['de_dust', 'inferno', 'mirage'][i % 3], ping: 20 + (i % 80), region: 'eu-west', build: '1.4.2', party: { size: 1 + (i % 5) } },
    }));
    const r = await fetch(`${base}/v1/datasets/${name}/ingest`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(events) });
    if (!r.ok) throw new Error(`seed ingest: ${r.status} ${await r.text()}`);
  }
}
