import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { parseScopes } from '../tokens/token-service.js';
import { openRuntime } from './runtime.js';
import { matchAll } from '../stores/events/event-store.js';
import { freePort, serveProcess } from '../test-support/test-process.js';

const serve = (dataDir: string, port: number) =>
  serveProcess(dataDir, port, { OPS_RATE_LIMIT_PER_SECOND: '100000', OPS_RATE_LIMIT_BURST: '100000' });

test('SIGKILL while clients ingest: after restart every answered event is stored exactly once', { timeout: 120_000 }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-crash-'));
  const config = loadConfig({ OPS_DATA_DIR: dataDir });
  const setup = await createContext(config, systemClock, 'cli');
  const org = await setup.orgs.createOrg({ name: 'Crash', plan: 'enterprise', ownerEmail: 'crash@example.com' });
  const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
  const { token } = await setup.tokens.create({ tenant, name: 't', scopes: parseScopes('all'), expiresAt: null });
  await setup.close();

  const port = await freePort();
  const child = await serve(dataDir, port);
  const acknowledged = new Set<string>();
  let stop = false;
  let counter = 0;
  const client = async (c: number) => {
    while (!stop) {
      const ids = Array.from({ length: 200 }, () => crypto.randomUUID());
      const body = ids.map((id, i) => JSON.stringify({ event_id: id, event: `c${c}`, message: `n${counter++}-${i}` })).join('\n');
      try {
        const r = await fetch(`http://127.0.0.1:${port}/v1/datasets/crash/ingest`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
          body,
        });
        if (r.status === 200) {
          const answer = (await r.json()) as { ingested: number };
          assert.equal(answer.ingested, 200);
          for (const id of ids) acknowledged.add(id);
        }
      } catch {
        return; // the server died mid-request: not acknowledged
      }
    }
  };
  const clients = Array.from({ length: 4 }, (_, c) => client(c));
  while (acknowledged.size < 4000) await new Promise((r) => setTimeout(r, 20));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  stop = true;
  await Promise.all(clients);
  assert.ok(acknowledged.size >= 4000);

  // restart the server once (it replays the WAL), then read the store directly
  const again = await serve(dataDir, port);
  const ready = await fetch(`http://127.0.0.1:${port}/v1/datasets`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(ready.status, 200);
  again.kill('SIGTERM');
  await new Promise((r) => again.once('exit', r));

  const ctx = await createContext(config, systemClock, 'cli');
  const runtime = await openRuntime(ctx);
  try {
    const seen = new Map<string, number>();
    let after;
    do {
      const page = await runtime.store.query(tenant, { filter: matchAll, limit: 1000, after });
      for (const e of page.events) seen.set(e.event_id, (seen.get(e.event_id) ?? 0) + 1);
      after = page.next;
    } while (after);
    for (const id of acknowledged) assert.equal(seen.get(id), 1, `event ${id} answered 200 must be stored exactly once`);
    for (const [id, n] of seen) assert.equal(n, 1, `event ${id} stored ${n} times`);
  } finally {
    await runtime.store.close();
    await ctx.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
