import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { parseScopes } from '../tokens/token-service.js';
import { exited, freePort, serveProcess } from '../test-support/test-process.js';
import { keyedRoutes, type KeyedRoute } from '../test-support/idempotency/test-routes.js';

interface Sent {
  route: KeyedRoute;
  variant: string;
  key: string;
  /** The answer received before the server was killed, if one was. */
  answer?: { status: number; text: string };
}

/** On the PostgreSQL leg the processes share a database of their own. */
async function database(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const admin = process.env.OPS_TEST_DATABASE_URL;
  if (!admin) return { env: {}, drop: async () => {} };
  const name = `ops_test_crash_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { env: { OPS_DATABASE_URL: url.toString() }, drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

const dataset = 'crash';

test('SIGKILL under keyed requests to the five endpoints, 5 times (once right after an answer was committed): every retry is answered 2xx with the first answer, and each effect exists once', { timeout: 300_000 }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-idem-crash-'));
  const db = await database();
  const env = { OPS_RATE_LIMIT_PER_SECOND: '100000', OPS_RATE_LIMIT_BURST: '100000', ...db.env };
  const setup = await createContext(loadConfig({ OPS_DATA_DIR: dataDir, ...db.env }), systemClock);
  const org = await setup.orgs.createOrg({ name: 'Crash', plan: 'enterprise', ownerEmail: 'crash@example.com' });
  const { token } = await setup.tokens.create({ tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' }, name: 'client', scopes: parseScopes('all'), expiresAt: null });
  await setup.close();

  const port = await freePort();
  const base = `http://127.0.0.1:${port}/v1`;
  const routes = keyedRoutes(dataset);
  /** `onAnswer` runs as soon as the answer's head arrives, before its body is read. */
  const send = async (entry: Sent, onAnswer?: () => void) => {
    const { body, contentType } = entry.route.body(entry.variant);
    const r = await fetch(`${base}${entry.route.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType, 'idempotency-key': entry.key },
      body,
    });
    onAnswer?.();
    return { status: r.status, text: await r.text(), replayed: r.headers.get('idempotent-replayed') === 'true' };
  };
  const get = async (urlPath: string, init?: RequestInit) => {
    const r = await fetch(`${base}${urlPath}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init?.headers } });
    const text = await r.text();
    assert.equal(r.status, 200, `${urlPath}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const children: ChildProcess[] = [];
  const serve = async () => {
    const child = await serveProcess(dataDir, port, env);
    children.push(child);
    return child;
  };

  const ledger: Sent[] = [];
  const victims: Sent[] = [];
  try {
    let n = 0;
    // Each round ends with a kill the moment the answer to one request (the victim, of each
    // endpoint in turn) starts arriving: its effect and answer are committed, the answer is
    // never used, exactly as if the process had died between the commit and the answer. The
    // other clients' requests are cut wherever they happen to be.
    for (let round = 0; round < routes.length; round++) {
      const child = await serve();
      let stop = false;
      let answered = 0;
      const enough = 10 + Math.floor(Math.random() * 30);
      let victimSent = false;
      const client = async (c: number) => {
        while (!stop) {
          const victim = c === 0 && !victimSent && answered >= enough;
          const route = victim ? routes[round]! : routes[n % routes.length]!;
          const entry: Sent = { route, variant: `r${round}c${c}n${n}`, key: `crash-${round}-${c}-${n}` };
          n++;
          ledger.push(entry);
          if (victim) {
            victimSent = true;
            victims.push(entry);
            await send(entry, () => child.kill('SIGKILL')).catch(() => undefined);
            return;
          }
          try {
            const { status, text } = await send(entry);
            if (stop) return; // answered after the kill: not counted as received
            assert.equal(status, entry.route.status, `${entry.route.name}: ${text}`);
            entry.answer = { status, text };
            answered++;
          } catch (error) {
            if (error instanceof assert.AssertionError) throw error;
            return; // the server died mid-request: no answer
          }
        }
      };
      const clients = Array.from({ length: 6 }, (_, c) => client(c));
      await exited(child);
      stop = true;
      await Promise.all(clients);
    }

    const unanswered = ledger.filter((e) => !e.answer).length;
    const child = await serve();
    // Before any retry: what the kills left committed (answered or not).
    const eventsBefore = await messages(get);
    let replayedUnanswered = 0;
    let appendedUnrecorded = 0;
    const retry = async (entry: Sent) => {
      const again = await send(entry);
      assert.equal(again.status, entry.route.status, `${entry.route.name} ${entry.key}: ${again.text}`);
      if (entry.answer) {
        assert.equal(again.text, entry.answer.text, `${entry.route.name} ${entry.key}: the first answer again`);
        assert.ok(again.replayed, `${entry.route.name} ${entry.key}: replayed`);
      } else {
        if (again.replayed) replayedUnanswered++;
        if (!again.replayed && eventsBefore.has(`${entry.variant}-0`)) appendedUnrecorded++;
        entry.answer = { status: again.status, text: again.text };
      }
      // And a second retry agrees with whatever the first said.
      assert.equal((await send(entry)).text, entry.answer.text);
    };
    for (const victim of victims) {
      const again = await send(victim);
      assert.equal(again.status, victim.route.status, `${victim.route.name} ${victim.key}: ${again.text}`);
      assert.ok(again.replayed, `${victim.route.name}: killed after its commit, its retry is the remembered answer`);
    }
    for (let i = 0; i < ledger.length; i += 6) await Promise.all(ledger.slice(i, i + 6).map(retry));
    t.diagnostic(`${ledger.length} keyed requests; ${unanswered} without an answer when the server was killed; killed between commit and answer (replayed without an answer before): ${replayedUnanswered}; ingest appended but not yet recorded when killed: ${appendedUnrecorded}`);

    // Each effect exactly once, with the ids its answer gave.
    const answers = (route: string) => ledger.filter((e) => e.route.name === route).map((e) => ({ variant: e.variant, body: JSON.parse(e.answer!.text) as Record<string, unknown> }));
    const tokens = await all(get, '/tokens', 'tokens');
    for (const { variant, body } of answers('POST /tokens')) {
      const found = tokens.filter((x) => x.name === `token-${variant}`);
      assert.equal(found.length, 1, `token-${variant}`);
      assert.equal(found[0]!.id, body.id);
    }
    const datasets = (await get('/datasets')).datasets as Array<Record<string, unknown>>;
    for (const { body } of answers('POST /datasets')) {
      assert.equal(datasets.filter((d) => d.name === body.name && d.created_at === body.created_at).length, 1, String(body.name));
    }
    const files = await all(get, '/media', 'files');
    for (const [route, prefix] of [['POST /media/base64', 'b64'], ['POST /media (multipart)', 'mp']] as const) {
      for (const { variant, body } of answers(route)) {
        const found = files.filter((f) => f.original_name === `${prefix}-${variant}.png`);
        assert.equal(found.length, 1, `${prefix}-${variant}`);
        assert.equal(found[0]!.id, body.id);
      }
    }
    const events = await messages(get);
    for (const { variant, body } of answers('POST /datasets/{name}/ingest')) {
      assert.deepEqual([events.get(`${variant}-0`), events.get(`${variant}-1`)], [1, 1], `events of ${variant}`);
      assert.deepEqual([body.ingested, body.failed], [2, 1]);
    }
    child.kill('SIGTERM');
    await exited(child);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

type Get = (urlPath: string, init?: RequestInit) => Promise<Record<string, unknown>>;

/** Every item of a cursor-paged list. */
async function all(get: Get, urlPath: string, field: string): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let cursor = '';
  do {
    const page = await get(`${urlPath}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...(page[field] as Array<Record<string, unknown>>));
    cursor = page.next_cursor as string;
  } while (cursor);
  return items;
}

/** How many times each message is stored in the crash dataset (POST /v1/query over every page). */
async function messages(get: Get): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  let cursor = '';
  do {
    const page = await get('/query', { method: 'POST', body: JSON.stringify({ q: `dataset:${dataset}`, ...(cursor ? { cursor } : {}) }) });
    for (const e of page.events as Array<{ message: string }>) seen.set(e.message, (seen.get(e.message) ?? 0) + 1);
    cursor = page.next_cursor as string;
  } while (cursor);
  return seen;
}
