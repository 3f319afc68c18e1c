import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DuckDbEngine } from './duckdb-tables.js';
import { chunkRows } from './duckdb-chunk.js';
import { encodeBatch } from '../wal/event-batch.js';
import type { NewEvent } from '../event-store.js';
import type { Tenant } from '../../tenancy/tenant.js';
import { newEventId } from '../../shared/ids.js';

const tenant = (org: string): Tenant => ({ orgId: org, projectId: `${org}_prj`, mode: 'live' });

/** `count` events from seq `from`, in runs of `run` events per dataset (ds_a, ds_b, ds_a, …); every other one below seq 3,000 without actor (chunks with NULLs, then chunks without). */
function events(from: number, count: number, run: number): NewEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const n = from + i;
    return {
      datasetId: Math.floor(i / run) % 2 ? 'ds_b' : 'ds_a',
      eventId: newEventId(),
      clientEventId: false,
      ts: 1_700_000_000_000 + n * 1_000,
      severity: n % 5,
      bytesRaw: 100 + n,
      event: n % 3 ? 'short' : 'an event name longer than twelve bytes',
      actor: n % 2 && n < 3_000 ? null : `actor-${n}`,
      source: null,
      message: `message ${n} ${'é'.repeat(n % 4)}`,
      payload: JSON.stringify({ n, text: 'x'.repeat(n % 40) }),
    };
  });
}

test('one load of records from alternating and new tenants, datasets changing within a record, more rows than a chunk: every row lands once with its tenant, dataset and text', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-loader-chunks-'));
  try {
    const engine = await DuckDbEngine.open({ dir });
    // Tenant a is known before the load; b and c are new in it and come back after others.
    await engine.load([{ firstSeq: 1, body: encodeBatch(tenant('a'), 1, events(1, 10, 10)) }], 10);
    const plan: Array<[string, number, number]> = [
      ['b', chunkRows * 2 + 100, 3_000], // more than two chunks, then a dataset change mid-chunk
      ['a', 700, 250],
      ['c', 1, 1],
      ['b', 5, 2],
      ['a', chunkRows, chunkRows],
    ];
    const expected: NewEvent[] = [];
    const owners: string[] = [];
    let seq = 11;
    const records = plan.map(([org, count, run]) => {
      const batch = events(seq, count, run);
      expected.push(...batch);
      owners.push(...batch.map(() => org));
      const record = { firstSeq: seq, body: encodeBatch(tenant(org), 2, batch) };
      seq += count;
      return record;
    });
    await engine.load(records, seq - 1);
    assert.equal(await engine.loadedSeq(), seq - 1);
    const rollup = async (org: string) => Object.fromEntries(await engine.rollupCounts(tenant(org), ['ds_a', 'ds_b'], 0));
    const counted = (org: string, ds: string) => expected.filter((e, i) => owners[i] === org && e.datasetId === ds).length + (org === 'a' && ds === 'ds_a' ? 10 : 0);
    for (const org of ['a', 'b', 'c']) {
      const want: Record<string, number> = {};
      for (const ds of ['ds_a', 'ds_b']) if (counted(org, ds)) want[ds] = counted(org, ds);
      assert.deepEqual(await rollup(org), want, `rollup of ${org}`);
    }
    await engine.close();

    const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'));
    const connection = await instance.connect();
    const rows = (
      await connection.runAndReadAll(
        'SELECT e.seq, t.org_id, e.dataset_id, e.event_id::VARCHAR, e.ts, e.severity, e.bytes_raw, e.event, e.actor, e.message, e.payload FROM events e JOIN event_tenants t ON t.id = e.tenant WHERE e.seq > 10 ORDER BY e.seq',
      )
    ).getRows();
    connection.closeSync();
    instance.closeSync();
    assert.equal(rows.length, expected.length);
    rows.forEach((r, i) => {
      const e = expected[i]!;
      assert.deepEqual(
        [Number(r[0]), r[1], r[2], r[3], Number(r[4]), Number(r[5]), Number(r[6]), r[7], r[8], r[9], r[10]],
        [11 + i, owners[i], e.datasetId, e.eventId, e.ts, e.severity, e.bytesRaw, e.event, e.actor, e.message, e.payload],
        `row ${11 + i}`,
      );
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
