import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error a plain .mjs module shared with `npm start` and `npm test` (no types)
import { compiledCli, serverDistStale } from '../../scripts/server-dist-stale.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let checkedCli: string | undefined;

/**
 * The arguments that run `opsctl <args>` from the compiled CLI (dist/, which `npm test` builds
 * when src/ changed): a spawned process starts on a third of the CPU it needs through tsx, and
 * runs what `npm start` runs. A stale dist/ is an error, never a silent test of old code.
 */
export function opsctlArgs(...args: string[]): string[] {
  if (!checkedCli) {
    if ((serverDistStale as (root: string) => boolean)(repoRoot)) throw new Error('dist/ is older than src/: `npm test` compiles it first; run `npm run build` when starting a test file by hand');
    checkedCli = (compiledCli as (root: string) => string)(repoRoot);
  }
  return [checkedCli, ...args];
}

/** A free TCP port on loopback (tests and bench/ alike). */
const handedOut = new Set<number>();
/**
 * A port free now and not handed out before by this process: two calls in a row can otherwise
 * get the same port back from the kernel, and a server given it as both OPS_PORT and
 * OPS_CDN_PORT is refused (and under the cluster would answer from either).
 */
export const freePort = async (): Promise<number> => {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.on('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
};

/** How long a started process has to answer before the test gives up on it. */
const startWaitMs = 90_000;

/**
 * `opsctl serve` (compiled) as its own process (for tests that kill it), answering /readyz
 * on `port` before this resolves. A child that exits before it answers is started again (up to
 * three times) with another delivery port: a port found free may be taken by another test's
 * listener before the child binds it (EADDRINUSE). With `logs`, the child's log lines (its
 * stdout) are collected there.
 */
export async function serveProcess(dataDir: string, port: number, env: Record<string, string> = {}, logs?: string[]): Promise<ChildProcess> {
  for (let attempt = 1; ; attempt++) {
    const child = spawn(process.execPath, opsctlArgs('serve'), {
      env: { ...process.env, OPS_DATA_DIR: dataDir, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), OPS_HOST: '127.0.0.1', OPS_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', logs ? 'pipe' : 'ignore', 'inherit'],
    });
    if (logs) {
      let partial = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        logs.push(...lines.filter(Boolean));
      });
    }
    // A deadline, not a count of tries: on a loaded machine (load average 17+ on 2 cores) a
    // start with its migrations took past 30 s once, and a fetch can itself take seconds.
    const deadline = Date.now() + startWaitMs;
    while (Date.now() < deadline && child.exitCode === null) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return child;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (child.exitCode !== null && attempt < 3) continue;
    child.kill('SIGKILL');
    throw new Error(child.exitCode !== null ? `server exited with code ${child.exitCode} before it answered (its error is above)` : 'server did not start');
  }
}

/**
 * `opsctl events-node` (compiled) as its own process, listening on `port` (its OPS_EVENTS_URL
 * is http://127.0.0.1:PORT) before this resolves.
 */
export async function eventsNodeProcess(dataDir: string, port: number, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, opsctlArgs('events-node'), {
    env: { ...process.env, OPS_DATA_DIR: dataDir, OPS_EVENTS_NODE_PORT: String(port), OPS_EVENTS_NODE_HOST: '127.0.0.1', OPS_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + startWaitMs;
  while (Date.now() < deadline) {
    // Any answer (404 to GET /) means it listens.
    if (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) return child;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('events node did not start');
}

/** Resolves when `child` has exited (at once if it has). */
export const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
