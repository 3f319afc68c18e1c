import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDbEngine } from './duckdb-tables.js';
import { rowGroupRows } from './duckdb-loader.js';
import { encodeBatch } from '../wal/event-batch.js';
import type { NewEvent } from '../event-store.js';
import { newEventId } from '../../shared/ids.js';

const tenant = { orgId: 'org_1', projectId: 'prj_1', mode: 'live' as const };
const walBytes = (dir: string) => fs.statSync(path.join(dir, 'events.duckdb.wal'), { throwIfNoEntry: false })?.size ?? 0;

function batch(from: number, count: number): Buffer {
  const events: NewEvent[] = [];
  for (let i = 0; i < count; i++) {
    const n = from + i;
    events.push({ datasetId: 'ds_x', eventId: newEventId(), clientEventId: false, ts: 1_700_000_000_000 + n, severity: 1, bytesRaw: 100, event: 'e', actor: null, source: null, message: `m ${n}`, payload: `{"n":${n}}` });
  }
  return encodeBatch(tenant, Date.now(), events);
}

test('the loader checkpoints when a row group fills, long before the WAL bound; every row stays readable, across a reopen too', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-checkpoint-'));
  try {
    let engine = await DuckDbEngine.open({ dir });
    const perLoad = 10_000;
    let seq = 1;
    const load = async (e: DuckDbEngine) => {
      await e.load([{ firstSeq: seq, body: batch(seq, perLoad) }], seq + perLoad - 1);
      seq += perLoad;
    };
    // Short rows: a whole row group's WAL is a few MB, far under wal_autocheckpoint.
    while (seq + perLoad <= rowGroupRows) await load(engine);
    const before = walBytes(dir);
    assert.ok(before > 1_000_000, `rows wait in the WAL until the group fills (${before} bytes)`);
    await load(engine); // crosses 122,880 rows
    assert.ok(walBytes(dir) < before / 10, `checkpointed: the WAL went from ${before} to ${walBytes(dir)} bytes`);
    await engine.close();
    // Reopened mid-group, the loader counts the open group's rows from the table, and checkpoints at the next boundary.
    engine = await DuckDbEngine.open({ dir });
    while (seq + perLoad <= 2 * rowGroupRows) await load(engine);
    assert.ok(walBytes(dir) > 1_000_000);
    await load(engine);
    assert.ok(walBytes(dir) < 1_000_000, `checkpointed again at the second boundary (${walBytes(dir)} bytes)`);
    assert.equal(await engine.loadedSeq(), seq - 1);
    await engine.close();
    engine = await DuckDbEngine.open({ dir });
    assert.equal(await engine.loadedSeq(), seq - 1);
    assert.deepEqual(await engine.rollupCounts(tenant, ['ds_x'], 0), [['ds_x', seq - 1]]);
    await engine.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
