import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openMetadataStore, type MetadataStore } from './database.js';

const adminUrl = process.env.OPS_TEST_DATABASE_URL;
const now = '2026-01-01T00:00:00.000Z';

/** Both dialects: SQLite always, PostgreSQL on its leg (a database of its own). */
const legs: Array<{ name: string; open: () => Promise<{ store: MetadataStore; drop: () => Promise<void> }> }> = [
  {
    name: 'SQLite',
    open: async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'write-atomically-'));
      return { store: await openMetadataStore({ databaseUrl: undefined, dataDir }), drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
    },
  },
];
if (adminUrl) {
  legs.push({
    name: 'PostgreSQL',
    open: async () => {
      const name = `ops_test_atomic_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const run = async (sql: string) => {
        const client = new pg.Client({ connectionString: adminUrl });
        await client.connect();
        await client.query(sql);
        await client.end();
      };
      await run(`CREATE DATABASE ${name}`);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return { store: await openMetadataStore({ databaseUrl: url.toString(), dataDir: os.tmpdir() }), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
    },
  });
}

for (const leg of legs) {
  describe(`MetadataStore.writeAtomically on ${leg.name}: all of the writes commit or none`, () => {
    let store: MetadataStore;
    let drop: () => Promise<void>;
    before(async () => ({ store, drop } = await leg.open()));
    after(async () => {
      await store.close();
      await drop();
    });

    const insertOrg = (id: string) => store.db.insertInto('organisations').values({ id, name: id, plan: 'free', primary_owner_id: null, created_at: now, updated_at: now }).compile();
    const ids = async (prefix: string) =>
      (await store.db.selectFrom('organisations').select('id').where('id', 'like', `${prefix}%`).orderBy('id').execute()).map((r) => r.id);

    test('every write commits together; one alone too', async () => {
      await store.writeAtomically([insertOrg('both_1'), insertOrg('both_2')]);
      await store.writeAtomically([insertOrg('both_3')]);
      assert.deepEqual(await ids('both_'), ['both_1', 'both_2', 'both_3']);
    });

    test('a failing write undoes the writes before it in the list', async () => {
      await store.writeAtomically([insertOrg('fail_1')]);
      // The second repeats an id: the first of the list must not stay.
      await assert.rejects(store.writeAtomically([insertOrg('fail_2'), insertOrg('fail_1')]));
      assert.deepEqual(await ids('fail_'), ['fail_1']);
      // The connection is usable afterwards, for either way of writing.
      await store.writeAtomically([insertOrg('fail_3'), insertOrg('fail_4')]);
      await store.db.transaction().execute((trx) => trx.executeQuery(insertOrg('fail_5')));
      assert.deepEqual(await ids('fail_'), ['fail_1', 'fail_3', 'fail_4', 'fail_5']);
    });

    test('writes asked for while a Kysely transaction is open are not part of it: its rollback leaves them', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inside!: () => void;
      const started = new Promise<void>((resolve) => (inside = resolve));
      const transaction = store.db.transaction().execute(async (trx) => {
        await trx.executeQuery(insertOrg('trx_1'));
        inside();
        await held;
        throw new Error('rolled back on purpose');
      });
      await started;
      const written = store.writeAtomically([insertOrg('trx_2'), insertOrg('trx_3')]);
      // Give the atomic write every chance to run while the transaction is open.
      await new Promise((resolve) => setTimeout(resolve, 20));
      release();
      await assert.rejects(transaction, /on purpose/);
      await written;
      assert.deepEqual(await ids('trx_'), ['trx_2', 'trx_3']);
    });

    test('a read served again until a write (readMostly) sees the atomic writes', async () => {
      const count = store.db.selectFrom('organisations').select((eb) => eb.fn.countAll<number>().as('n')).where('id', 'like', 'seen_%').compile();
      const n = async () => Number((await store.readMostly(count))[0]!.n);
      assert.equal(await n(), 0);
      await store.writeAtomically([insertOrg('seen_1'), insertOrg('seen_2')]);
      assert.equal(await n(), 2);
      await store.writeAtomically([insertOrg('seen_3')]);
      assert.equal(await n(), 3);
    });
  });
}
