import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { iso } from '../shared/clock.js';
import { processOwner } from '../shared/process-owner.js';
import { IdempotencyStore, keepMs, leaseMs, type KeyScope } from './idempotency-store.js';
import { answerKey } from './sealed-answer.js';

/** The claim rules against the real metadata database (SQLite, or PostgreSQL on its leg). */
describe('IdempotencyStore', () => {
  let s: TestServer;
  let store: IdempotencyStore;
  before(async () => {
    s = await startTestServer();
    store = new IdempotencyStore(s.server.ctx.metadata.db, s.clock);
  });
  after(() => s.close());

  let n = 0;
  const scope = (tokenId = 'tok_store'): KeyScope => {
    const key = `store-${n++}`;
    return { tokenId, key, sealKey: answerKey('ops_live_secret', key) };
  };
  const request = { endpoint: 'POST /v1/things', body: { sha256: 'a'.repeat(64), bytes: 10 } };
  const answer = { status: 201, contentType: 'application/json; charset=utf-8', body: Buffer.from('{"id":"x"}') };
  const rowOf = (sc: KeyScope) => s.server.ctx.metadata.db.selectFrom('idempotency_keys').selectAll().where('token_id', '=', sc.tokenId).where('idem_key', '=', sc.key).executeTakeFirstOrThrow();
  const setRow = (sc: KeyScope, values: { owner?: string; owner_instance?: string; lease_until?: string }) =>
    s.server.ctx.metadata.db.updateTable('idempotency_keys').set(values).where('token_id', '=', sc.tokenId).where('idem_key', '=', sc.key).execute();

  test('the first claim holds the key; a second one sees it running; once done it sees the answer, unsealed', async () => {
    const sc = scope();
    const first = await store.claim(sc, request);
    assert.ok(first.claimed);
    const second = await store.claim(sc, request);
    assert.equal(second.known?.state, 'running');
    assert.equal(await store.complete(first.claimed, answer, request.body), true);
    store.forget(first.claimed);
    const third = await store.claim(sc, request);
    assert.equal(third.known?.state, 'done');
    assert.deepEqual(third.known?.answer, answer);
    assert.ok(!(await rowOf(sc)).answer!.includes('{"id"'), 'stored sealed');
  });

  test('a key belongs to its token: the same key of another token is claimed on its own', async () => {
    const mine = scope('tok_one');
    const theirs = { ...mine, tokenId: 'tok_two' };
    assert.ok((await store.claim(mine, request)).claimed);
    assert.ok((await store.claim(theirs, request)).claimed);
  });

  test('a released (5xx) key is claimed again, keeping its nonce and first use', async () => {
    const sc = scope();
    const first = (await store.claim(sc, request)).claimed!;
    await store.release(first);
    store.forget(first);
    s.clock.advance(5_000);
    const again = (await store.claim(sc, { ...request, body: { sha256: 'b'.repeat(64), bytes: 3 } })).claimed!;
    assert.ok(again);
    assert.notEqual(again.id, first.id);
    assert.equal(again.nonce, first.nonce);
    assert.equal(again.firstUseMs, first.firstUseMs);
    // The first holder's late writes are fenced off.
    assert.equal(await store.complete(first, answer, request.body), false);
    assert.equal(await store.renew(first), false);
    assert.equal(await store.renew(again), true);
  });

  test('another host holding a live lease keeps the key; once its lease runs out the key is taken over', async () => {
    const sc = scope();
    const first = (await store.claim(sc, request)).claimed!;
    store.forget(first);
    await setRow(sc, { owner: 'elsewhere-4242', owner_instance: 'other' });
    assert.equal((await store.claim(sc, request)).known?.state, 'running');
    s.clock.advance(leaseMs + 1);
    const taken = (await store.claim(sc, request)).claimed;
    assert.ok(taken, 'taken over after the lease');
    assert.equal(taken.nonce, first.nonce);
    assert.equal((await rowOf(sc)).owner, processOwner());
  });

  test('a holder on this host whose process is gone, or an earlier process with our pid, loses the key at once', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const host = os.hostname().replace(/[^A-Za-z0-9]/g, '_');
    for (const owner of [`${host}-${dead}`, processOwner()]) {
      const sc = scope();
      const first = (await store.claim(sc, request)).claimed!;
      store.forget(first);
      await setRow(sc, { owner, owner_instance: 'an-earlier-start' });
      assert.ok((await store.claim(sc, request)).claimed, `owner ${owner}`);
    }
  });

  test('a claim of this process that it no longer holds (its release failed) is taken over here at once', async () => {
    const sc = scope();
    const first = (await store.claim(sc, request)).claimed!;
    assert.equal((await store.claim(sc, request)).known?.state, 'running');
    store.forget(first);
    assert.ok((await store.claim(sc, request)).claimed);
  });

  test('a gone holder is not replaced by a request with another body or endpoint: its effect may exist', async () => {
    const sc = scope();
    const first = (await store.claim(sc, request)).claimed!;
    store.forget(first);
    assert.equal((await store.claim(sc, { ...request, body: { sha256: 'c'.repeat(64), bytes: 10 } })).known?.state, 'running');
    assert.equal((await store.claim(sc, { ...request, endpoint: 'POST /v1/other' })).known?.state, 'running');
    assert.ok((await store.claim(sc, request)).claimed);
  });

  test('24 hours after its first use a key is claimed afresh (new nonce), and the purge removes such rows', async () => {
    const sc = scope();
    const first = (await store.claim(sc, request)).claimed!;
    await store.complete(first, answer, request.body);
    store.forget(first);
    s.clock.advance(keepMs);
    const fresh = (await store.claim(sc, request)).claimed!;
    assert.ok(fresh);
    assert.notEqual(fresh.nonce, first.nonce);
    assert.ok(fresh.firstUseMs >= first.firstUseMs + keepMs, `first use ${iso(fresh.firstUseMs)}`);
    const old = scope();
    await store.claim(old, request);
    s.clock.advance(keepMs);
    assert.ok((await store.purge()) >= 2);
    assert.equal(await s.server.ctx.metadata.db.selectFrom('idempotency_keys').selectAll().where('idem_key', 'in', [sc.key, old.key]).executeTakeFirst(), undefined);
  });

  test('concurrent claims of one key: exactly one holds it', async () => {
    const sc = scope();
    const results = await Promise.all(Array.from({ length: 20 }, () => store.claim(sc, request)));
    assert.equal(results.filter((r) => r.claimed).length, 1);
  });
});
