import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { opsctlArgs } from './test-support/test-process.js';

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

async function serve(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const port = await freePort();
  const child = spawn(process.execPath, opsctlArgs('serve'), {
    env: { ...process.env, ...env, OPS_HOST: '127.0.0.1', OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { child, url, exited };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill('SIGKILL');
  throw new Error('the server did not start');
}

test('a real server process: SIGTERM closes it cleanly (exit 0); its data and tokens survive a restart', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-proc-'));
  const env: NodeJS.ProcessEnv = { OPS_DATA_DIR: dataDir, OPS_LOG_LEVEL: 'warn' };
  if (process.env.OPS_TEST_DATABASE_URL) {
    // The PostgreSQL leg: this process test keeps to SQLite; the rest of the suite covers PostgreSQL.
    delete env.OPS_DATABASE_URL;
  }
  try {
    const first = await serve(env);
    const init = spawnSync(process.execPath, opsctlArgs('init', '--json'), { env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.equal(init.status, 0, init.stderr);
    const { token, org_id: orgId } = JSON.parse(init.stdout) as { token: string; org_id: string };
    const members = (url: string) => fetch(`${url}/v1/orgs/${orgId}/members`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await members(first.url)).status, 200);

    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);

    const second = await serve(env);
    const res = await members(second.url);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { members: unknown[] }).members.length, 1);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
