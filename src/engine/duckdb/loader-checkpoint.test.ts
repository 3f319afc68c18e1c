import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDbEngine } from './duckdb-tables.js';
import { rowGroupRows, sealRows } from './duckdb-loader.js';
import { recordsForLoad } from '../wal/wal-loader.js';
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

test('the loader seals a row group when the next load would overflow it, long before the WAL bound, across a reopen too; every row stays counted', async () => {
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
    // Twelve loads (120,000 rows) fit the 122,880-row group: no checkpoint yet.
    while (seq - 1 + perLoad <= rowGroupRows) await load(engine);
    assert.equal(engine.loadRoom(), rowGroupRows - 120_000);
    const before = walBytes(dir);
    assert.ok(before > 1_000_000, `rows wait in the WAL until the group fills (${before} bytes)`);
    await load(engine); // would overflow: the group is sealed first, these rows start the next
    assert.ok(walBytes(dir) < before / 5, `checkpointed: the WAL went from ${before} to ${walBytes(dir)} bytes`);
    assert.equal(engine.loadRoom(), rowGroupRows - perLoad);
    assert.deepEqual(await engine.rowGroups(), [120_000, perLoad]);
    await engine.close();
    // Reopened (DuckDB checkpoints at close), the loader counts a row group's worth of rows again.
    engine = await DuckDbEngine.open({ dir });
    const reopenedAt = seq;
    while (seq - reopenedAt + perLoad <= rowGroupRows) await load(engine);
    assert.ok(walBytes(dir) > 1_000_000);
    await load(engine);
    assert.ok(walBytes(dir) < 1_000_000, `checkpointed again after a row group's worth of rows (${walBytes(dir)} bytes)`);
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

test("loads sized by the engine's room seal every row group nearly full, so DuckDB never merges and compresses them again; a load bigger than the room starts the next group", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-groups-'));
  try {
    const engine = await DuckDbEngine.open({ dir });
    // The log's records of 1,000 events, loads of at most 44,000 as bench:ingest's saturated
    // server made them: before the room, groups were sealed at 88,000 rows and merged 4 into 3.
    const perRecord = 1_000;
    const maxLoad = 44_000;
    let seq = 1;
    let pending = Array.from({ length: 420 }, (_, i) => ({ firstSeq: 1 + i * perRecord, count: perRecord }));
    while (pending.length) {
      const chosen = recordsForLoad(pending, maxLoad, engine.loadRoom());
      pending = pending.slice(chosen.length);
      const last = chosen[chosen.length - 1]!;
      await engine.load(chosen.map((r) => ({ firstSeq: r.firstSeq, body: batch(r.firstSeq, r.count) })), last.firstSeq + last.count - 1);
      seq = last.firstSeq + last.count;
      const groups = await engine.rowGroups();
      // Every group but the open one is sealed with more rows than four-into-three merging allows.
      for (const rows of groups.slice(0, -1)) assert.ok(rows >= sealRows, `a sealed group of ${rows} rows (${JSON.stringify(groups)})`);
    }
    assert.deepEqual(await engine.rowGroups(), [122_000, 122_000, 122_000, 54_000]);
    assert.deepEqual(await engine.rollupCounts(tenant, ['ds_x'], 0), [['ds_x', seq - 1]]);
    await engine.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the blocks the loader's checkpoints write leave DuckDB's buffer pool, and the rows read back from the file", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-pool-'));
  try {
    const engine = await DuckDbEngine.open({ dir });
    // Messages of random hex (they compress little): four row groups are ~40 MB of blocks,
    // which DuckDB would keep in its pool (memory_limit 192 MB) if nothing dropped them.
    const perLoad = 10_000;
    let seq = 1;
    const body = (from: number) => {
      const events: NewEvent[] = [];
      for (let i = 0; i < perLoad; i++) {
        const n = from + i;
        events.push({ datasetId: 'ds_x', eventId: newEventId(), clientEventId: false, ts: 1_700_000_000_000 + n, severity: 1, bytesRaw: 100, event: 'e', actor: null, source: null, message: `${newEventId()} ${newEventId()}`, payload: `{"n":${n}}` });
      }
      return encodeBatch(tenant, Date.now(), events);
    };
    while (seq <= 4 * rowGroupRows) {
      await engine.load([{ firstSeq: seq, body: body(seq) }], seq + perLoad - 1);
      seq += perLoad;
    }
    const pool = await engine.bufferPool();
    const blocks = pool.get('BASE_TABLE') ?? 0;
    assert.ok(blocks < 12 * 1024 * 1024, `the table's blocks in the pool: ${(blocks / 1e6).toFixed(1)} MB`);
    assert.deepEqual(await engine.rollupCounts(tenant, ['ds_x'], 0), [['ds_x', seq - 1]]);
    const page = await engine.query(tenant, { filter: { where: 'seq = ?', params: [12_345] }, limit: 10 });
    assert.equal(page.events.length, 1);
    assert.match(page.events[0]!.message, /^[0-9a-f-]{36} [0-9a-f-]{36}$/);
    await engine.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
