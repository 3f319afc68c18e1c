/**
 * Hot keys with several ingesters on ClickHouse (docs/events-engine.md "Several
 * ingesters"): two engines loading logs of their own into one database, as two API processes
 * do. The second adopts the layout the first made for the same keys; after a change, while the
 * other is loading, a read counts the rows it may still load with an older layout (the grace) and
 * asks the table again when the grace ends; the backfill then gives every row of the dataset the
 * columns the loader would have written. ClickHouse leg only (OPS_TEST_CLICKHOUSE_URL).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '@clickhouse/client';
import { v7 } from 'uuid';
import type { NewEvent } from '../event-store.js';
import { encodeBatch } from '../wal/event-batch.js';
import type { Tenant } from '../../tenancy/tenant.js';
import { ClickHouseEngine } from './clickhouse-engine.js';
import { dropClickHouseDatabase, freshClickHouseUrl } from '../../test-support/engine/clickhouse-testing.js';
import { parseClickHouseUrl } from '../../config/clickhouse-url.js';
import { slotAssignments } from './clickhouse-hot-backfill.js';
import { refreshEveryMs } from './clickhouse-hot-layouts.js';
import { legs } from '../../test-support/ci.js';

const onLeg = legs.clickhouse();
const tenant: Tenant = { orgId: 'ORGA', projectId: 'P1', mode: 'live' };
const now = Date.now();
/** The engines' tick: the grace after a change is two of them and 5 s. */
const intervalMs = 100;

const records = (first: number, n: number, datasetId: string) => {
  const events: NewEvent[] = Array.from({ length: n }, (_, i) => ({
    datasetId,
    eventId: v7(),
    clientEventId: false,
    ts: now - 60_000 + first + i,
    severity: 1,
    bytesRaw: 10,
    event: 'e',
    actor: null,
    source: null,
    message: '',
    // Every type at the keys' paths, and missing: what the columns must hold exactly as the arrays.
    payload: JSON.stringify(i % 7 === 6 ? {} : { map: [`m${i % 3}`, 'a"b', 5, 1.5, true, null, ['x']][i % 7], ping: i % 5 === 0 ? 'slow' : i }),
  }));
  return { firstSeq: first, body: encodeBatch(tenant, now, events) };
};

async function sql(url: string, query: string): Promise<Array<Record<string, string>>> {
  const client = createClient({ url: parseClickHouseUrl(url).hosts[0], log: { level: 127 as never } });
  try {
    return await (await client.query({ query, format: 'JSONEachRow' })).json();
  } finally {
    await client.close();
  }
}

onLeg.describe('hot keys with several ingesters on ClickHouse', () => {
  let url: string;
  let a: ClickHouseEngine;
  let b: ClickHouseEngine;
  before(async () => {
    url = freshClickHouseUrl(process.env.OPS_TEST_CLICKHOUSE_URL!);
    a = await ClickHouseEngine.open(url, { logId: '00000000000000aa', hotKeysIntervalMs: intervalMs });
    b = await ClickHouseEngine.open(url, { logId: '00000000000000bb', hotKeysIntervalMs: intervalMs });
    await a.loadedSeq();
    await b.loadedSeq();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    if (url) await dropClickHouseDatabase(url);
  });

  test('the second adopts the first’s layout; a change’s grace counts the other’s older rows; the backfill fills every row as the loader would', async () => {
    const db = parseClickHouseUrl(url).database;
    await a.load([records(1, 40, 'ds_1')], 40);
    await b.load([records(1, 30, 'ds_1')], 30);
    const map = [{ pointer: '/map', type: 'string' as const }];
    await a.setHotKeys(tenant, 'ds_1', map);
    await b.setHotKeys(tenant, 'ds_1', map);
    const made = await sql(url, `SELECT id, slots FROM ${db}.event_hot_layouts WHERE dataset_id = 'ds_1'`);
    assert.equal(made.length, 1, 'one layout, adopted by the second ingester');
    const first = Number(made[0]!.id);
    const current = async (e: ClickHouseEngine) => (await e.hotLayouts(tenant, ['ds_1'])).find((l) => l.current)!;
    assert.equal((await current(b)).id, first);

    // A changes the keys; B has not taken them yet and loads with the first layout meanwhile.
    const both = [...map, { pointer: '/ping', type: 'number' as const }];
    await a.setHotKeys(tenant, 'ds_1', both);
    await b.load([records(31, 30, 'ds_1')], 60);
    const graced = await a.hotLayouts(tenant, ['ds_1']);
    const older = graced.find((l) => l.id === first)!;
    assert.equal(older.stored?.maxTs, Number.MAX_SAFE_INTEGER, 'within the grace the older layout counts as present at any ts');
    assert.ok(graced.some((l) => l.id === 0 && l.stored?.maxTs === Number.MAX_SAFE_INTEGER), 'and so do rows without hot keys');
    // The backfill waits for the grace to end, then fills every row of the dataset.
    const second = (await current(a)).id;
    assert.notEqual(second, first);
    for (let i = 0; await a.backfillHotKeys(tenant, 'ds_1'); i++) {
      assert.ok(i < 1_200, 'the backfill ends');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const after = await a.hotLayouts(tenant, ['ds_1']);
    assert.deepEqual(after.filter((l) => l.stored).map((l) => l.id), [second], 'every row carries the current layout');
    // Each slot as the loader writes it: the arrays' elements at the key's path.
    const slots = after.find((l) => l.id === second)!.slots;
    const differs = slots.flatMap((s) => slotAssignments(s.slot, s.pointer).map((assignment) => `NOT (${assignment.replace(' = ', ' = (')}))`));
    const [wrong] = await sql(url, `SELECT count() AS n, countIf(${differs.join(' OR ')}) AS bad FROM ${db}.events WHERE dataset_id = 'ds_1'`);
    assert.deepEqual(wrong, { n: '100', bad: '0' });
  });

  test('two ingesters making layouts at the same moment: no id usable by a load holds two layouts', async () => {
    const db = parseClickHouseUrl(url).database;
    for (let round = 0; round < 5; round++) {
      await Promise.all([
        a.setHotKeys(tenant, `ds_x${round}`, [{ pointer: '/x', type: 'string' }]),
        b.setHotKeys(tenant, `ds_y${round}`, [{ pointer: '/y', type: 'number' }, { pointer: '/z', type: 'string' }]),
      ]);
    }
    // A maker that kept an id before the other's INSERT landed learns of the collision at its next
    // read of the table and gives the id up; the task's next tick (an interval later, past the
    // layouts' refresh period) hands the keys again.
    await new Promise((resolve) => setTimeout(resolve, refreshEveryMs + 100));
    for (let round = 0; round < 5; round++) {
      await a.setHotKeys(tenant, `ds_x${round}`, [{ pointer: '/x', type: 'string' }]);
      await b.setHotKeys(tenant, `ds_y${round}`, [{ pointer: '/y', type: 'number' }, { pointer: '/z', type: 'string' }]);
    }
    const taken = new Set((await sql(url, `SELECT id FROM ${db}.event_hot_layouts GROUP BY id HAVING uniqExact(dataset_id, slots) > 1`)).map((r) => Number(r.id)));
    for (let round = 0; round < 5; round++) {
      for (const [engine, d] of [[a, `ds_x${round}`], [b, `ds_y${round}`]] as const) {
        const layout = (await engine.hotLayouts(tenant, [d])).find((l) => l.current)!;
        assert.ok(layout.slots.length > 0, `${d} has its keys`);
        assert.ok(!taken.has(layout.id), `${d}'s layout ${layout.id} is its own`);
      }
    }
  });
});
