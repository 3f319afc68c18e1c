// The plan's datasets cap across processes: two workers creating at once (POST /datasets, and
// ingest into new names, which overflows into `default` past the cap) never pass it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call, postAlone, processStore, workers } from '../test-support/notifications/test-processes.js';

test("serve --workers 2: datasets created at once through both workers never pass the plan's cap", { timeout: 240_000 }, async () => {
  const store = await processStore('ops-datasets-cap-');
  const setup = await store.open();
  await setup.orgs.setPlan(store.tenant.orgId, 'free'); // 3 datasets
  await setup.close();
  const servers = await workers(store);
  const ctx = await store.open();
  const capped = () => ctx.metadata.db.selectFrom('datasets').select(['id', 'name']).where('archived_at', 'is', null).where('is_default', '=', 0).execute();
  try {
    const archiveAll = async () => {
      for (const { name } of await capped()) assert.equal((await call(servers.port, store.token, 'DELETE', `/datasets/${name}`)).status, 200);
    };
    for (let round = 0; round < 3; round++) {
      // 16 creations at once, each on a connection of its own: both workers count and insert at the same time.
      const created = await Promise.all(Array.from({ length: 16 }, (_, i) => postAlone(servers.port, store.token, '/datasets', { name: `made-${round}-${i}` })));
      assert.deepEqual([created.filter((x) => x === 201).length, created.filter((x) => x === 402).length], [3, 13], `round ${round}: ${created.join(' ')}`);
      assert.equal((await capped()).length, 3);
      await archiveAll();

      // 16 ingests into new names at once: 3 get datasets, the rest go to `default`.
      const ingested = await Promise.all(Array.from({ length: 16 }, (_, i) => postAlone(servers.port, store.token, `/datasets/auto-${round}-${i}/ingest`, [{ event: 'x', message: `m${i}` }])));
      assert.ok(ingested.every((x) => x === 200), ingested.join(' '));
      const made = await capped();
      assert.equal(made.length, 3, `round ${round}: ${made.map((d) => d.name).join(' ')}`);
      await archiveAll();
    }
  } finally {
    await servers.close();
    await ctx.close();
    await store.drop();
  }
});
