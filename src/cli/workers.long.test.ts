import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { parseScopes } from '../tokens/token-service.js';
import { Agent, fetch } from 'undici';
import { exited, freePort, opsctlArgs } from '../test-support/test-process.js';

test('serve --workers 2 on the embedded default: both workers serve everything, a dead worker is replaced, SIGTERM stops cleanly with the log loaded', { timeout: 120_000 }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-workers-'));
  const setup = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
  const org = await setup.orgs.createOrg({ name: 'Workers', plan: 'pro', ownerEmail: 'w@example.com' });
  const { token } = await setup.tokens.create({
    tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' },
    name: 't',
    scopes: parseScopes('all'),
    expiresAt: null,
  });
  await setup.close();
  const port = await freePort();
  let log = '';
  const primary = spawn(process.execPath, opsctlArgs('serve', '--workers', '2'), {
    env: { ...process.env, OPS_DATA_DIR: dataDir, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), OPS_HOST: '127.0.0.1', OPS_LOG_LEVEL: 'info', OPS_RATE_LIMIT_PER_SECOND: '100000', OPS_RATE_LIMIT_BURST: '100000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  primary.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  // A connection per call: the primary hands each new connection to the next worker in turn.
  const call = async (method: string, urlPath: string, body?: unknown) => {
    const dispatcher = new Agent();
    const r = await fetch(`http://127.0.0.1:${port}/v1${urlPath}`, {
      dispatcher,
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'application/x-ndjson' : 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const answer = { status: r.status, body: (await r.json()) as { [k: string]: unknown } };
    await dispatcher.close();
    return answer;
  };
  const workerPids = () => new Set([...log.matchAll(/"pid":(\d+)[^\n]*"msg":"(?:incoming request|request completed)"/g)].map((m) => Number(m[1])));
  try {
    // Up to 90 s: two workers and the events node starting on a loaded 2-core machine took over 30.
    let ready = false;
    for (let i = 0; i < 900 && !(ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(ready, `serve --workers 2 did not answer /readyz within 90 s; its log:\n${log.slice(-2000)}`);
    assert.equal((await call('POST', '/datasets', { name: 'game' })).status, 201);
    for (let i = 0; i < 20; i++) {
      const r = await call('POST', '/datasets/game/ingest', JSON.stringify({ event: 'hit', message: `m${i}` }));
      assert.equal(r.status, 200);
      // Every worker reads every event acknowledged before (the events node's read-your-writes).
      const q = await call('POST', '/query', { q: 'event:hit group by event' });
      assert.deepEqual(q.body.groups, [{ value: 'hit', count: i + 1 }]);
    }
    const pids = workerPids();
    assert.equal(pids.size, 2, `requests were served by ${pids.size} worker(s)`);
    // A worker killed: once the primary has seen it go (a connection handed to it in the moment
    // it died is lost, as with any crash), the other answers everything, and a new one starts.
    process.kill([...pids][0]!, 'SIGKILL');
    for (let i = 0; i < 100 && !log.includes('a worker stopped'); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(log, /a worker stopped; starting another/);
    for (let i = 0; i < 10; i++) assert.equal((await call('GET', '/datasets')).status, 200);
    for (let i = 0; i < 300 && workerPids().size < 3; i++) {
      await call('GET', '/datasets');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(workerPids().size, 3, 'the replacement worker serves requests');
  } finally {
    primary.kill('SIGTERM');
    await exited(primary);
  }
  assert.equal(primary.exitCode, 0);
  // The events node loaded everything at its clean stop and deleted the log's segments.
  assert.deepEqual(fs.readdirSync(path.join(dataDir, 'events', 'wal')), []);
  fs.rmSync(dataDir, { recursive: true, force: true });
});
