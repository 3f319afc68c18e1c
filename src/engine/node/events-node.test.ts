import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/config.js';
import { createContext } from '../../app/context.js';
import { systemClock } from '../../shared/clock.js';
import { parseScopes } from '../../tokens/token-service.js';
import { eventsNodeProcess, exited, freePort, serveProcess } from '../../test-support/test-process.js';
import { eventsNodeKey, eventsNodePrefix, nodeKeyHeader } from './remote-event-store.js';
import { frameAppend } from '../wal/event-batch.js';
import { newEventId } from '../../shared/ids.js';
import { changeBoardFile } from '../change-board.js';

const secret = 'events-node-test-secret-key-0123456789abcdef';
const env = { OPS_SECRET_KEY: secret, OPS_RATE_LIMIT_PER_SECOND: '100000', OPS_RATE_LIMIT_BURST: '100000', OPS_TAIL_POLL_MS: '200' };

/** An installation with its events on an events node and two API processes, on one data dir (SQLite metadata, shared). */
type Installation = Awaited<ReturnType<typeof installation>>;

async function installation() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-node-'));
  const setup = await createContext(loadConfig({ OPS_DATA_DIR: dataDir, OPS_SECRET_KEY: secret }), systemClock);
  const org = await setup.orgs.createOrg({ name: 'Node', plan: 'enterprise', ownerEmail: 'node@example.com' });
  const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
  const { token } = await setup.tokens.create({ tenant, name: 't', scopes: parseScopes('all'), expiresAt: null });
  const other = await setup.orgs.createOrg({ name: 'Other', plan: 'enterprise', ownerEmail: 'other@example.com' });
  const { token: otherToken } = await setup.tokens.create({
    tenant: { orgId: other.org_id, projectId: other.project_id, mode: 'live' },
    name: 't',
    scopes: parseScopes('all'),
    expiresAt: null,
  });
  await setup.close();
  const nodePort = await freePort();
  const children: ChildProcess[] = [];
  const startNode = async () => {
    const child = await eventsNodeProcess(dataDir, nodePort, env);
    children.push(child);
    return child;
  };
  const node = await startNode();
  // The node's change board, as `serve --workers` gives it to its workers (src/engine/change-board.ts).
  const apiEnv = { ...env, OPS_EVENTS_URL: `http://127.0.0.1:${nodePort}`, OPS_EVENTS_CHANGE_BOARD: changeBoardFile(path.join(dataDir, 'events')) };
  // Each port is found free just before its server binds it (a port held unused for seconds may
  // be taken by another test's listener meanwhile).
  const started = await Promise.all(
    [0, 1].map(async () => {
      const port = await freePort();
      const child = await serveProcess(dataDir, port, apiEnv);
      children.push(child);
      return { port, child };
    }),
  );
  const ports = started.map((p) => p.port);
  const [a, b] = started.map((p) => p.child) as [ChildProcess, ChildProcess];
  const call = async (port: number, method: string, urlPath: string, body?: unknown, as = token) => {
    const r = await fetch(`http://127.0.0.1:${port}/v1${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${as}`, ...(body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'application/x-ndjson' : 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, body: text ? JSON.parse(text) : undefined };
  };
  return {
    dataDir,
    nodePort,
    ports: ports as [number, number],
    node,
    a,
    b,
    token,
    otherToken,
    startNode,
    call,
    close: async () => {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(children.map(exited));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const ndjson = (events: object[]) => events.map((e) => JSON.stringify(e)).join('\n');

// One installation (events node + two API processes) for the whole file, in the order below: each
// test keeps to datasets and events of its own, and the two that kill a process come last (the
// node's death and recovery, then an API process's, which the installation does not survive).
let s: Installation;
before(async () => {
  s = await installation();
}, { timeout: 120_000 });
after(async () => {
  await s?.close();
});

test('two API processes on one events node: ingest on B is read on A at once, cursors and de-duplication hold across them, tenants stay apart', { timeout: 120_000 }, async () => {
  const [pa, pb] = s.ports;
  assert.equal((await s.call(pa, 'POST', '/datasets', { name: 'game' })).status, 201);
  // Read-your-writes across processes: B acknowledges, A's next query sees every event.
  const ids = Array.from({ length: 250 }, () => crypto.randomUUID());
  const ingested = await s.call(pb, 'POST', '/datasets/game/ingest', ndjson(ids.map((id, i) => ({ event_id: id, event: 'kill', message: `m${i}` }))));
  assert.equal(ingested.status, 200);
  assert.equal(ingested.body.ingested, 250);
  const first = await s.call(pa, 'POST', '/query', { q: 'dataset:game' });
  assert.equal(first.status, 200);
  assert.equal(first.body.events.length, 100);
  assert.equal(first.body.events[0].dataset, 'game', 'the API process names datasets from its metadata');
  // A cursor from A continues on B.
  const seen = new Set<string>(first.body.events.map((e: { event_id: string }) => e.event_id));
  let cursor = first.body.next_cursor as string;
  while (cursor) {
    const page = await s.call(pb, 'POST', '/query', { q: 'dataset:game', cursor });
    assert.equal(page.status, 200);
    for (const e of page.body.events) seen.add(e.event_id);
    cursor = page.body.next_cursor;
  }
  assert.deepEqual([...seen].sort(), [...ids].sort());
  // The same client event ids sent to both processes at once are stored once.
  const retry = await Promise.all([pa, pb].map((port) => s.call(port, 'POST', '/datasets/game/ingest', ndjson(ids.slice(0, 50).map((id) => ({ event_id: id, event: 'retry' }))))));
  // A retry is answered as ingested (the client's batch is safe) but not stored again.
  assert.deepEqual(retry.map((r) => r.status), [200, 200]);
  const grouped = await s.call(pb, 'POST', '/query', { q: 'dataset:game group by event' });
  assert.deepEqual(grouped.body.groups, [{ value: 'kill', count: 250 }]);
  // Counts, schema and another tenant's view go through the node too.
  const datasets = await s.call(pa, 'GET', '/datasets');
  assert.equal(datasets.body.datasets[0].events_last_24h, 250);
  const foreign = await s.call(pa, 'POST', '/query', { q: 'event:kill' }, s.otherToken);
  assert.equal(foreign.status, 200);
  assert.equal(foreign.body.events.length, 0);
});

test('pages and counts kept by an API process (change board) are asked again once the other process ingested', { timeout: 60_000 }, async () => {
  const [pa, pb] = s.ports;
  await s.call(pa, 'POST', '/datasets', { name: 'kept-pages' });
  const count = async () => (await s.call(pa, 'GET', '/datasets')).body.datasets.find((d: { name: string }) => d.name === 'kept-pages').events_last_24h;
  const page = async () => (await s.call(pa, 'POST', '/query', { q: 'dataset:kept-pages' })).body.events.map((e: { message: string }) => e.message);
  for (let round = 1; round <= 5; round++) {
    // Asked twice on A (the second from A's memory while unchanged), then one more event on B.
    assert.deepEqual(await page(), await page());
    assert.equal(await count(), round - 1);
    assert.equal(await count(), round - 1);
    assert.equal((await s.call(pb, 'POST', '/datasets/kept-pages/ingest', ndjson([{ event: 'board', message: `r${round}` }]))).status, 200);
    assert.equal((await page())[0], `r${round}`, 'the event B acknowledged is on the next page of A');
    assert.equal(await count(), round);
  }
});

test('live tail on A sees events ingested on B', { timeout: 60_000 }, async () => {
  const controller = new AbortController();
  try {
    const [pa, pb] = s.ports;
    await s.call(pa, 'POST', '/datasets', { name: 'tail' });
    const response = await fetch(`http://127.0.0.1:${pa}/v1/query/tail`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ q: 'event:boom' }),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    await s.call(pb, 'POST', '/datasets/tail/ingest', ndjson([{ event: 'boom', message: 'from B' }]));
    let text = '';
    const until = Date.now() + 10_000;
    while (!text.includes('from B') && Date.now() < until) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    assert.match(text, /"message":"from B"/);
  } finally {
    controller.abort();
  }
});

test('the events node refuses callers without the secret key, and answers bad calls with 4xx', { timeout: 60_000 }, async () => {
  const url = `http://127.0.0.1:${s.nodePort}${eventsNodePrefix}`;
  const post = (method: string, body: string, key?: string) =>
    fetch(`${url}/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { [nodeKeyHeader]: key } : {}) }, body });
  assert.equal((await post('last-seq', '{}')).status, 401);
  assert.equal((await post('last-seq', '{}', eventsNodeKey(Buffer.from('another-installations-secret-key-000000')))).status, 401);
  const key = eventsNodeKey(Buffer.from(secret));
  assert.equal((await post('last-seq', '{}', key)).status, 200);
  assert.equal((await post('query', '{"tenant": {"orgId": 1}}', key)).status, 400);
  assert.equal((await post('query', 'not json', key)).status, 400);
  assert.equal((await post('constructor', '{}', key)).status, 404);
  // Appends come in the log's own encoding (frameAppend): a cut or damaged one is refused whole.
  const before = await (await post('last-seq', '{}', key)).json();
  const tenant = { orgId: '01JDZQ4X0000000000000000AB', projectId: '01JDZQ4X0000000000000000CD', mode: 'live' as const };
  const frame = frameAppend(tenant, Date.now(), [{ datasetId: 'ds_x', eventId: newEventId(), clientEventId: false, ts: Date.now(), severity: 1, bytesRaw: 2, event: 'e', actor: null, source: null, message: '', payload: '{}' }]);
  const batch = (bytes: Buffer) => fetch(`${url}/append-batch`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', [nodeKeyHeader]: key }, body: new Uint8Array(bytes) });
  for (const bad of [frame.subarray(0, frame.length - 3), Buffer.concat([frame, Buffer.from([0])]), Buffer.from('{"tenant":{}}')]) {
    const r = await batch(bad);
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { error: { message: string } }).error.message, /malformed event batch/);
  }
  const invalidUtf8 = Buffer.from(frame);
  invalidUtf8[invalidUtf8.length - 3] = 0xff; // inside the payload text
  assert.equal((await batch(invalidUtf8)).status, 400);
  assert.deepEqual(await (await post('last-seq', '{}', key)).json(), before, 'nothing refused reached the log');
  assert.equal((await batch(frame)).status, 200);
});

test('events node killed: API processes answer 503 storage_error at once, then recover by themselves; acknowledged events are kept', { timeout: 120_000 }, async () => {
  const [pa, pb] = s.ports;
  await s.call(pa, 'POST', '/datasets', { name: 'kept' });
  const stored = await s.call(pa, 'POST', '/datasets/kept/ingest', ndjson(Array.from({ length: 100 }, (_, i) => ({ event: 'kept', message: `k${i}` }))));
  assert.equal(stored.body.ingested, 100);
  // A keeps the page it read last (change board): with the node gone and nothing changed, it is still the answer.
  assert.equal((await s.call(pa, 'POST', '/query', { q: 'event:kept' })).body.events.length, 100);
  s.node.kill('SIGKILL');
  await exited(s.node);
  const kept = await s.call(pa, 'POST', '/query', { q: 'event:kept' });
  assert.equal(kept.status, 200);
  assert.equal(kept.body.events.length, 100);
  const down = await s.call(pb, 'POST', '/query', { q: 'event:kept' });
  assert.equal(down.status, 503);
  assert.equal(down.body.error.code, 'storage_error');
  assert.ok(Number(down.headers.get('retry-after')) >= 1);
  const ingestDown = await s.call(pa, 'POST', '/datasets/kept/ingest', ndjson([{ event: 'lost' }]));
  assert.equal(ingestDown.status, 503);
  // Metadata routes do not need the node.
  assert.equal((await s.call(pa, 'GET', '/datasets')).status, 503, 'dataset counts come from the events store');
  assert.equal((await s.call(pa, 'GET', '/usage')).status, 200);
  const ready = await fetch(`http://127.0.0.1:${pa}/readyz`);
  assert.equal(ready.status, 503);
  await s.startNode();
  const recovered = await s.call(pb, 'POST', '/query', { q: 'event:kept group by event' });
  assert.equal(recovered.status, 200);
  assert.deepEqual(recovered.body.groups, [{ value: 'kept', count: 100 }]);
  assert.equal((await fetch(`http://127.0.0.1:${pa}/readyz`)).status, 200);
});

test('an API process killed during ingest: the other keeps serving, and every acknowledged event is stored once', { timeout: 120_000 }, async () => {
  const [pa, pb] = s.ports;
  await s.call(pa, 'POST', '/datasets', { name: 'load' });
  const acknowledged = new Set<string>();
  let stop = false;
  const client = async (port: number) => {
    while (!stop) {
      const ids = Array.from({ length: 100 }, () => crypto.randomUUID());
      try {
        const r = await s.call(port, 'POST', '/datasets/load/ingest', ndjson(ids.map((id) => ({ event_id: id, event: 'load' }))));
        if (r.status === 200) for (const id of ids) acknowledged.add(id);
      } catch {
        // the process was killed under this request: not acknowledged
        if (port === pa) return;
      }
    }
  };
  const clients = [client(pa), client(pa), client(pb), client(pb)];
  await new Promise((r) => setTimeout(r, 1_500));
  s.a.kill('SIGKILL');
  await exited(s.a);
  await new Promise((r) => setTimeout(r, 1_000));
  stop = true;
  await Promise.all(clients);
  const seen = new Map<string, number>();
  let cursor = '';
  do {
    const page = await s.call(pb, 'POST', '/query', { q: 'event:load', ...(cursor ? { cursor } : {}) });
    assert.equal(page.status, 200);
    for (const e of page.body.events) seen.set(e.event_id, (seen.get(e.event_id) ?? 0) + 1);
    cursor = page.body.next_cursor;
  } while (cursor);
  assert.ok(acknowledged.size > 500, `only ${acknowledged.size} events were acknowledged`);
  for (const id of acknowledged) assert.equal(seen.get(id), 1, `acknowledged event ${id} is stored once`);
});
