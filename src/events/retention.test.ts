import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { matchAll } from '../engine/event-store.js';
import { retentionFromCli } from './admin-socket.js';
import { createLogger } from '../kernel/logger.js';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { opsctlArgs } from '../test-support/test-process.js';

const day = 86_400_000;

describe('retention', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_PURGE_INTERVAL_MS: '1000' } });
  });
  after(() => s.close());

  const count = async (dataset: string) => {
    const { store } = s.server.events;
    return (await store.query(s.tenants.a, { filter: matchAll, limit: 1000 })).events.filter((e) => e.dataset === dataset).length;
  };

  test('purge deletes events older than each dataset’s retention_days', async () => {
    const now = s.server.ctx.clock.now();
    await s.request('POST', '/datasets', { json: { name: 'short', retention_days: 2 } });
    await s.request('POST', '/datasets/short/ingest', { json: [{ ts: now - 3 * day }, { ts: now - 1 * day }, { ts: now }] });
    await s.request('POST', '/datasets/long/ingest', { json: [{ ts: now - 3 * day }, { ts: now - 29 * day }, { ts: now - 31 * day }] });
    const result = await s.server.events.purge();
    // The 1 s background job (next test) may have run between the ingest and this call and
    // deleted some of the two first: what counts is what is left. The exact figure a purge
    // reports is checked without a background job below.
    assert.ok(Number(result.events_deleted) <= 2, `deleted ${String(result.events_deleted)}`);
    assert.equal(await count('short'), 2);
    assert.equal(await count('long'), 2);
  });

  test('the background job runs every OPS_PURGE_INTERVAL_MS', async () => {
    s.clock.advance(5 * day);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await count('short'), 0);
    assert.equal(await count('long'), 1);
  });

  test('opsctl purge while the server runs goes through the admin socket', async () => {
    await s.request('POST', '/datasets/viacli/ingest', { json: [{ ts: s.server.ctx.clock.now() - 60 * day }] });
    // Asynchronous: the server under test lives in this process and must keep answering.
    const run = await promisify(execFile)(process.execPath, opsctlArgs('purge', '--json'), {
      env: {
        ...process.env,
        OPS_DATA_DIR: s.dataDir,
        ...(s.server.ctx.config.databaseUrl ? { OPS_DATABASE_URL: s.server.ctx.config.databaseUrl } : {}),
        ...(s.server.ctx.config.eventsClickHouseUrl ? { OPS_EVENTS_URL: s.server.ctx.config.eventsClickHouseUrl } : {}),
      },
      encoding: 'utf8',
    });
    const out = JSON.parse(run.stdout) as { events: { via: string; events_deleted: number } };
    assert.equal(out.events.via, 'server');
    // the 1 s background job may have deleted it first: either way it is gone
    assert.ok(out.events.events_deleted <= 1);
    assert.equal(await count('viacli'), 0);
  });
});

test('opsctl purge without a running server opens the event store itself', async () => {
  const s = await startTestServer();
  const config = { ...s.server.ctx.config };
  await s.request('POST', '/datasets/alone/ingest', { json: [{ ts: Date.now() - 60 * day }, {}] });
  await s.server.close();
  const ctx = await createContext(
    loadConfig({
      OPS_DATA_DIR: config.dataDir,
      ...(config.databaseUrl ? { OPS_DATABASE_URL: config.databaseUrl } : {}),
      ...(config.eventsClickHouseUrl ? { OPS_EVENTS_URL: config.eventsClickHouseUrl } : {}),
    }),
    systemClock,
  );
  try {
    const result = await retentionFromCli(ctx, createLogger(false));
    assert.equal(result.via, 'direct');
    assert.equal(result.events_deleted, 1);
  } finally {
    await ctx.close();
    await s.close();
  }
});

// The background job and `opsctl purge` (through the admin socket) can run at the same time:
// DuckDB refuses the second of two deletes of the same rows, so the store queues them.
test('concurrent purges all succeed and delete each old event once', async () => {
  const s = await startTestServer();
  try {
    const old = Date.now() - 60 * day;
    for (const name of ['one', 'two']) {
      await s.request('POST', `/datasets/${name}/ingest`, { json: [...Array.from({ length: 50 }, () => ({ ts: old })), { ts: Date.now() }] });
    }
    const results = await Promise.all(Array.from({ length: 4 }, () => s.server.events.purge()));
    assert.equal(results.reduce((sum, r) => sum + Number(r.events_deleted), 0), 100);
    const { store } = s.server.events;
    assert.equal((await store.query(s.tenants.a, { filter: matchAll, limit: 1000 })).events.length, 2);
  } finally {
    await s.close();
  }
});
