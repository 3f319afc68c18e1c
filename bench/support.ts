import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
  const child = spawn(process.execPath, ['--max-semi-space-size=8', ...nodeArgs, 'bin/opsctl.js', 'serve'], {
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

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
