import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openMetadataStore } from './database.js';

const now = '2026-01-01T00:00:00.000Z';

// ReadMostlyCache behind MetadataStore.readMostly on the embedded store: served again while
// nothing is written, read afresh after any write by this connection or another one.
test('readMostly: the same answer until anything is written, by this connection or another', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-mostly-'));
  const store = await openMetadataStore({ databaseUrl: undefined, dataDir });
  const other = await openMetadataStore({ databaseUrl: undefined, dataDir });
  try {
    const insert = (db: typeof store.db, id: string) =>
      db.insertInto('organisations').values({ id, name: id, plan: 'free', primary_owner_id: null, created_at: now, updated_at: now }).execute();
    const query = store.db.selectFrom('organisations').select(['id', 'name']).where('plan', '=', 'free').orderBy('id').compile();
    const names = async () => (await store.readMostly(query)).map((r) => r.name);

    await insert(store.db, 'org_a');
    const first = await store.readMostly(query);
    assert.deepEqual(first.map((r) => r.id), ['org_a']);
    // Nothing written: the very same rows, not a second read.
    assert.equal(await store.readMostly(query), first);

    // A write by this connection, including one that returns rows.
    await insert(store.db, 'org_b');
    assert.deepEqual(await names(), ['org_a', 'org_b']);
    await store.db.updateTable('organisations').set({ name: 'renamed' }).where('id', '=', 'org_a').returning('id').execute();
    assert.deepEqual(await names(), ['renamed', 'org_b']);

    // A write by another connection to the same file (opsctl beside the server).
    await insert(other.db, 'org_c');
    assert.deepEqual(await names(), ['renamed', 'org_b', 'org_c']);
    await other.db.deleteFrom('organisations').where('id', '=', 'org_b').execute();
    assert.deepEqual(await names(), ['renamed', 'org_c']);

    // A read while this connection's transaction is open waits for it and sees what it left.
    let reading: Promise<string[]> | undefined;
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await trx.updateTable('organisations').set({ name: 'uncommitted' }).where('id', '=', 'org_c').execute();
        reading = names();
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await reading, ['renamed', 'org_c']);
    await store.db.transaction().execute(async (trx) => {
      await trx.updateTable('organisations').set({ name: 'committed' }).where('id', '=', 'org_c').execute();
      reading = names();
    });
    assert.deepEqual(await reading, ['renamed', 'committed']);
    assert.deepEqual(await names(), ['renamed', 'committed']);
  } finally {
    await other.close();
    await store.close();
  }
});

// The usage counters (a write on every query and ingest) are the exception: this process's own
// writes of them, outside a transaction, do not move the stamp, and no read-mostly read may read
// them. Anyone else's writes of them still do.
test('readMostly: still served after this process writes the usage counters; read again after any other write', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-mostly-'));
  const store = await openMetadataStore({ databaseUrl: undefined, dataDir });
  const other = await openMetadataStore({ databaseUrl: undefined, dataDir });
  try {
    await store.db.insertInto('organisations').values({ id: 'org_a', name: 'a', plan: 'free', primary_owner_id: null, created_at: now, updated_at: now }).execute();
    const query = store.db.selectFrom('organisations').select(['id', 'name']).orderBy('id').compile();
    const count = (db: typeof store.db, used: number) =>
      db
        .insertInto('usage_counters')
        .values({ org_id: 'org_a', metric: 'queries_month', period: '2026-01', used })
        .onConflict((oc) => oc.columns(['org_id', 'metric', 'period']).doUpdateSet({ used: (eb) => eb('usage_counters.used', '+', used) }))
        .execute();
    const first = await store.readMostly(query);
    await count(store.db, 1);
    await store.db.updateTable('usage_counters').set({ used: 5 }).where('org_id', '=', 'org_a').execute();
    assert.equal(await store.readMostly(query), first, 'served again after its own counter writes');
    const stamp = store.changeStamp!();
    await count(store.db, 1);
    assert.equal(store.changeStamp!(), stamp);

    // Another connection's counter write, a counter write inside a transaction, any other write.
    await count(other.db, 1);
    const second = await store.readMostly(query);
    assert.notEqual(second, first, 'read again after another connection wrote the counters');
    await store.db.transaction().execute((trx) => count(trx, 1));
    const third = await store.readMostly(query);
    assert.notEqual(third, second, 'read again after a transaction wrote the counters');
    await count(store.db, 1);
    assert.equal(await store.readMostly(query), third);
    await store.db.updateTable('organisations').set({ name: 'renamed' }).where('id', '=', 'org_a').execute();
    assert.deepEqual((await store.readMostly(query)).map((r) => r.name), ['renamed']);
    const used = await store.db.selectFrom('usage_counters').select('used').executeTakeFirstOrThrow();
    assert.equal(used.used, 9);

    // A read-mostly read of the counters would be served after this process's writes of them.
    await assert.rejects(() => store.readMostly(store.db.selectFrom('usage_counters').selectAll().compile()), /usage_counters/);
  } finally {
    await other.close();
    await store.close();
  }
});
