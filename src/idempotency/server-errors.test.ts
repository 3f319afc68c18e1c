import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startTestServer } from '../test-support/test-server.js';
import { eventsNodeProcess, exited, freePort } from '../test-support/test-process.js';
import { matchAll } from '../engine/event-store.js';
import { legs } from '../test-support/ci.js';

/**
 * A request that failed with 5xx is not remembered (DECISIONS.md §16): the key is free again,
 * and the same key and body run once the cause is gone. Each store made to fail for real.
 */

test('ingest while the events node is down → 503; the same key and body run once it is back, and the events are stored once', { timeout: 120_000 }, async () => {
  const secret = 'idempotency-test-secret-0123456789abcdef';
  const nodeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-idem-node-'));
  const nodePort = await freePort();
  let node = await eventsNodeProcess(nodeDir, nodePort, { OPS_SECRET_KEY: secret });
  const s = await startTestServer({ env: { OPS_EVENTS_URL: `http://127.0.0.1:${nodePort}`, OPS_SECRET_KEY: secret } });
  try {
    const ingest = () =>
      s.request('POST', '/datasets/down/ingest', { json: [{ event: 'a', message: 'm1' }, { event: 'b', message: 'm2' }], headers: { 'idempotency-key': 'ingest-5xx' } });
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'down' } })).status, 201);
    node.kill('SIGKILL');
    await exited(node);
    const down = await ingest();
    assert.equal(down.status, 503, down.text);
    assert.equal(down.body.error.code, 'storage_error');
    node = await eventsNodeProcess(nodeDir, nodePort, { OPS_SECRET_KEY: secret });
    let back = await ingest();
    // The pool may need a moment to reach the node again: still 503, still not remembered.
    for (let i = 0; i < 50 && back.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      back = await ingest();
    }
    assert.equal(back.status, 200, back.text);
    assert.equal(back.headers.get('idempotent-replayed'), null, 'the 503 was not remembered');
    const replay = await ingest();
    assert.equal(replay.text, back.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    const { events } = await s.server.events.store.query(s.tenants.a, { filter: matchAll, limit: 100 });
    assert.deepEqual(events.map((e) => e.message).sort(), ['m1', 'm2']);
  } finally {
    await s.close();
    node.kill('SIGKILL');
    await exited(node);
    fs.rmSync(nodeDir, { recursive: true, force: true });
  }
});

const adminUrl = process.env.OPS_TEST_DATABASE_URL;

// PostgreSQL only: SQLite has no way to fail one statement of the server after the key is
// claimed, the claim itself would fail first.
legs.postgres().test(
  'POST /tokens and POST /datasets whose insert is cancelled in the database → 500; the same key and body then run, once',
  async () => {
    const s = await startTestServer();
    const database = new URL(s.server.ctx.config.databaseUrl!).pathname.slice(1);
    const locker = new pg.Client({ connectionString: s.server.ctx.config.databaseUrl });
    const admin = new pg.Client({ connectionString: adminUrl });
    await locker.connect();
    await admin.connect();
    try {
      for (const [urlPath, table, body] of [
        ['/tokens', 'api_tokens', { name: 'cancelled', scopes: ['media:read'] }],
        ['/datasets', 'datasets', { name: 'cancelled' }],
      ] as const) {
        const key = `cancel-${table}`;
        const send = () => s.request('POST', urlPath, { json: body, headers: { 'idempotency-key': key } });
        // Reads go on; the endpoint's insert waits for the lock, and is then cancelled (an
        // operator's pg_cancel_backend, or a statement timeout).
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${table} IN SHARE MODE`);
        const pending = send();
        let cancelled = false;
        for (let i = 0; i < 100 && !cancelled; i++) {
          const { rows } = await admin.query(
            `select pg_cancel_backend(pid) as ok from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and query ilike $2`,
            [database, `insert into "${table}"%`],
          );
          cancelled = rows.length > 0;
          if (!cancelled) await new Promise((r) => setTimeout(r, 20));
        }
        assert.ok(cancelled, 'the insert was waiting and got cancelled');
        const failed = await pending;
        await locker.query('ROLLBACK');
        assert.equal(failed.status, 500, failed.text);
        assert.equal(failed.body.error.code, 'internal');
        const ok = await send();
        assert.equal(ok.status, 201, ok.text);
        assert.equal(ok.headers.get('idempotent-replayed'), null, 'the 500 was not remembered');
        assert.equal((await send()).text, ok.text);
        const { rows } = await locker.query(`select count(*)::int as n from ${table} where name = 'cancelled'`);
        assert.equal(rows[0].n, 1);
      }
    } finally {
      await locker.end();
      await admin.end();
      await s.close();
    }
  },
);
