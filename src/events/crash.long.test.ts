import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { parseScopes } from '../tokens/token-service.js';
import { freePort, serveProcess, opsctlArgs } from '../test-support/test-process.js';

/** How many times each event id answers the SOQL query `q`, over every page (POST /v1/query). */
async function timesStored(port: number, token: string, q: string): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  let cursor = '';
  do {
    const r = await fetch(`http://127.0.0.1:${port}/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ q, ...(cursor ? { cursor } : {}) }),
    });
    assert.equal(r.status, 200);
    const page = (await r.json()) as { events: Array<{ event_id: string }>; next_cursor: string };
    for (const e of page.events) seen.set(e.event_id, (seen.get(e.event_id) ?? 0) + 1);
    cursor = page.next_cursor;
  } while (cursor);
  return seen;
}

// Small segments and small loads: the loader commits, and deletes segments, many times a
// second, so a kill at a random moment lands in every phase (mid-write, mid-load, between a
// load's COMMIT and its segment's delete, mid-roll) over the five rounds.
const serve = (dataDir: string, port: number, env: Record<string, string> = {}) =>
  serveProcess(dataDir, port, {
    OPS_RATE_LIMIT_PER_SECOND: '100000',
    OPS_RATE_LIMIT_BURST: '100000',
    OPS_EVENTS_SEGMENT_BYTES: '65536',
    OPS_EVENTS_LOAD_BATCH: '300',
    ...env,
  });

// On the ClickHouse leg the events go to a database of their own there: the kills then also land
// between a load's INSERT and its position row, which only the engine's seq check makes safe.
const clickhouseBase = process.env.OPS_TEST_CLICKHOUSE_URL;

test('SIGKILL at random points of ingest and loading, 5 times: every answered event is stored exactly once', { timeout: 240_000 }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-crash-'));
  const testing = clickhouseBase ? await import('../test-support/engine/clickhouse-testing.js') : undefined;
  const eventsUrl = testing?.freshClickHouseUrl(clickhouseBase!);
  const engineEnv: Record<string, string> = eventsUrl ? { OPS_EVENTS_URL: eventsUrl } : {};
  const config = loadConfig({ OPS_DATA_DIR: dataDir });
  const setup = await createContext(config, systemClock);
  const org = await setup.orgs.createOrg({ name: 'Crash', plan: 'enterprise', ownerEmail: 'crash@example.com' });
  const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
  const { token } = await setup.tokens.create({ tenant, name: 't', scopes: parseScopes('all'), expiresAt: null });
  await setup.close();

  const acknowledged = new Set<string>();
  let counter = 0;
  for (let round = 0; round < 5; round++) {
    // Each start replays what the kill before it left in the log. A port of its own each time:
    // the one a killed server freed may be taken by another test file's server meanwhile, whose
    // answers (401 to this token) would keep the loop below waiting until the test times out.
    const port = await freePort();
    const child = await serve(dataDir, port, engineEnv);
    let stop = false;
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
    const before = acknowledged.size;
    const clients = Array.from({ length: 4 }, (_, c) => client(c));
    const until = Date.now() + 60_000;
    while (acknowledged.size < before + 2000) {
      if (Date.now() > until) assert.fail(`round ${round}: ${acknowledged.size - before} events acknowledged in 60 s (the restarted server does not take ingest)`);
      await new Promise((r) => setTimeout(r, 10));
    }
    await new Promise((r) => setTimeout(r, Math.random() * 300));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    stop = true;
    await Promise.all(clients);
  }
  assert.ok(acknowledged.size >= 10_000);

  // A last start replays the log; a query over HTTP right after sees every event (read-your-writes).
  const port = await freePort();
  const again = await serve(dataDir, port, engineEnv);
  const seen = await timesStored(port, token, 'dataset:crash');
  again.kill('SIGTERM');
  await new Promise((r) => again.once('exit', r));
  try {
    for (const id of acknowledged) assert.equal(seen.get(id), 1, `event ${id} answered 200 must be stored exactly once`);
    for (const [id, n] of seen) assert.equal(n, 1, `event ${id} stored ${n} times`);
    const wal = fs.readdirSync(path.join(dataDir, 'events', 'wal'));
    assert.deepEqual(wal, [], 'a clean stop loads everything and leaves no segment');
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (eventsUrl) await testing!.dropClickHouseDatabase(eventsUrl);
  }
});

/** The loaded position and dataset ids of a stopped server's event store, read directly. */
async function storeState(dataDir: string): Promise<{ position: number; datasetId: string }> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(path.join(dataDir, 'events', 'events.duckdb'));
  const connection = await instance.connect();
  try {
    const position = Number((await connection.runAndReadAll('SELECT coalesce(max(position), 0) FROM event_loader')).getRows()[0]![0]);
    const datasetId = (await connection.runAndReadAll('SELECT any_value(dataset_id) FROM events')).getRows()[0]![0] as string;
    return { position, datasetId };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

test('SIGKILL in the middle of a start-up replay (mid-load, segments being deleted): the next start loads each event exactly once', { timeout: 240_000 }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-replay-'));
  const config = loadConfig({ OPS_DATA_DIR: dataDir });
  const setup = await createContext(config, systemClock);
  const org = await setup.orgs.createOrg({ name: 'Replay', plan: 'enterprise', ownerEmail: 'replay@example.com' });
  const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
  const { token } = await setup.tokens.create({ tenant, name: 't', scopes: parseScopes('all'), expiresAt: null });
  await setup.close();
  const port = await freePort();

  // The dataset exists (one event through the API), then the server stops cleanly.
  let child = await serve(dataDir, port);
  const first = await fetch(`http://127.0.0.1:${port}/v1/datasets/replay/ingest`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"event":"first"}' });
  assert.equal(first.status, 200);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));

  // A log holding 2,000 acknowledged records (10 events each) the engine has not loaded: what a
  // crash under load leaves. Written with the server's own log and record encoder.
  const before = await storeState(dataDir);
  const { WriteAheadLog } = await import('../engine/wal/wal.js');
  const { encodeBatch } = await import('../engine/wal/event-batch.js');
  const { wal } = WriteAheadLog.open({ dir: path.join(dataDir, 'events', 'wal'), segmentBytes: 65_536, loadedSeq: before.position });
  const ids: string[] = [];
  for (let r = 0; r < 2_000; r++) {
    const events = Array.from({ length: 10 }, (_, i) => {
      const eventId = crypto.randomUUID();
      ids.push(eventId);
      return { datasetId: before.datasetId, eventId, clientEventId: false, ts: Date.now(), severity: 1, bytesRaw: 50, event: 'logged', actor: null, source: `r${r}`, message: `m${i}`, payload: '{}' };
    });
    void wal.append(encodeBatch(tenant, Date.now(), events), events.length);
  }
  await wal.close();
  const last = before.position + ids.length;

  // Start with one record per load transaction (a slow replay) and kill it part-way through.
  let killedMidReplay = false;
  // Longer waits only when a start-up took longer than the previous wait (a loaded machine).
  for (const delayMs of [2_000, 4_000, 8_000, 16_000, 32_000]) {
    const { spawn } = await import('node:child_process');
    child = spawn(process.execPath, opsctlArgs('serve'), {
      env: { ...process.env, OPS_DATA_DIR: dataDir, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), OPS_HOST: '127.0.0.1', OPS_LOG_LEVEL: 'fatal', OPS_EVENTS_LOAD_BATCH: '1', OPS_EVENTS_SEGMENT_BYTES: '65536' },
      stdio: 'ignore',
    });
    await new Promise((r) => setTimeout(r, delayMs));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const { position } = await storeState(dataDir);
    if (position > before.position && position < last) {
      killedMidReplay = true;
      break;
    }
    if (position >= last) break; // the replay finished first: nothing left to interrupt
  }
  assert.ok(killedMidReplay, 'a kill landed while the replay was loading');

  // The next start replays the rest; every event is there once.
  child = await serve(dataDir, port);
  try {
    const seen = await timesStored(port, token, 'dataset:replay');
    assert.equal(seen.size, ids.length + 1);
    for (const id of ids) assert.equal(seen.get(id), 1, `event ${id} loaded ${seen.get(id) ?? 0} times`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
