import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openMetadataStore, sqliteLimitFix } from './database.js';
import { precompile } from './precompiled.js';

test('precompile: placeholders are swapped for the values of each call, fixed values kept', async () => {
  const store = await openMetadataStore({ databaseUrl: undefined, dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'precompiled-')) });
  try {
    const now = '2026-01-01T00:00:00.000Z';
    for (const [id, plan] of [['org_a', 'free'], ['org_b', 'pro'], ['org_c', 'pro']]) {
      await store.db.insertInto('organisations').values({ id: id!, name: id!, plan: plan!, primary_owner_id: null, created_at: now, updated_at: now }).execute();
    }
    const byPlan = precompile(
      (p) => store.db.selectFrom('organisations').select('id').where('plan', '=', p('plan')).where('name', '!=', 'never').orderBy('id').limit(p('limit') as unknown as number),
      ['plan', 'limit'],
    );
    const ids = async (plan: string, limit: number) => (await store.db.executeQuery(byPlan({ plan, limit }))).rows.map((r) => r.id);
    assert.deepEqual(await ids('pro', 10), ['org_b', 'org_c']);
    assert.deepEqual(await ids('pro', 1), ['org_b']);
    assert.deepEqual(await ids('free', 10), ['org_a']);
    assert.deepEqual(await ids("pro' or '1'='1", 10), []);
    assert.throws(() => precompile((p) => store.db.selectFrom('organisations').select('id').where('plan', '=', p('plan')), ['plan', 'unused']), /unused/);
  } finally {
    await store.close();
  }
});

test('SQLite limit rewrite: only the bound LIMIT/OFFSET placeholders change', () => {
  assert.equal(sqliteLimitFix('select "a" from "t" where "b" = ? order by "a" limit ?'), 'select "a" from "t" where "b" = ? order by "a" limit cast(? as integer)');
  assert.equal(sqliteLimitFix('select 1 limit ? offset ?'), 'select 1 limit cast(? as integer) offset cast(? as integer)');
  assert.equal(sqliteLimitFix('select "limit" from "t" where "x" = ?'), 'select "limit" from "t" where "x" = ?');
});
