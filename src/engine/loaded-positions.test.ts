import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { bindParams } from './clickhouse/literal.js';
import { parseClickHouseUrl } from '../config/clickhouse-url.js';
import type { CompiledFilter } from './event-store.js';
import { furthest, loadedAt, loadedBetween, movedOn, type LoadedPositions } from './loaded-positions.js';
import { legs } from '../test-support/ci.js';

const clickhouseUrl = process.env.OPS_TEST_CLICKHOUSE_URL;

interface Row {
  log: string;
  seq: number;
}

/** What the conditions must select, by their definition: each log's events up to its position. */
const isLoaded = (positions: LoadedPositions, row: Row) => row.seq <= (positions[row.log] ?? 0);
const key = (r: Row) => `${r.log}.${r.seq}`;

const logs = ['', '0123456789abcdef', 'fedcba9876543210', '00000000000000aa'];
/** Rows of up to four logs (seqs 1…n each, as a log numbers them), and two positions, the second at or past the first. */
const scenario = (logIds: readonly string[]) =>
  fc
    .record({
      sizes: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: logIds.length, maxLength: logIds.length }),
      was: fc.array(fc.option(fc.integer({ min: 0, max: 45 }), { nil: undefined }), { minLength: logIds.length, maxLength: logIds.length }),
      step: fc.array(fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }), { minLength: logIds.length, maxLength: logIds.length }),
    })
    .map(({ sizes, was, step }) => {
      const rows: Row[] = logIds.flatMap((log, i) => Array.from({ length: sizes[i]! }, (_, k) => ({ log, seq: k + 1 })));
      const before: Record<string, number> = {};
      const now: Record<string, number> = {};
      logIds.forEach((log, i) => {
        if (was[i] !== undefined) before[log] = was[i]!;
        if (was[i] !== undefined || step[i] !== undefined) now[log] = (was[i] ?? 0) + (step[i] ?? 0);
      });
      return { rows, was: before as LoadedPositions, now: now as LoadedPositions };
    });

describe('loaded positions as conditions on the events (the monitors window counts read by them)', () => {
  test('a one-log engine: `seq` against the log \'\', and no other log', () => {
    assert.deepEqual(loadedAt({ '': 7 }, 'duckdb'), { where: 'seq <= ?', params: [7] });
    assert.deepEqual(loadedAt({}, 'duckdb', false), { where: 'seq > ?', params: [0] });
    assert.throws(() => loadedAt({ '0123456789abcdef': 1 }, 'duckdb'), /one-log engine/);
    assert.throws(() => loadedAt({ "x' OR 1": 1 }, 'clickhouse'), /not a loaded position/);
    assert.equal(loadedBetween({ '': 5 }, { '': 5 }, 'duckdb'), undefined, 'nothing loaded since: nothing to read');
    assert.deepEqual(movedOn({ a: 1, b: 2 }, { a: 1, b: 3, c: 1 }), [['b', 3], ['c', 1]]);
    assert.deepEqual(furthest({ a: 4, b: 2 }, { a: 1, b: 3, c: 1 }), { a: 4, b: 3, c: 1 });
  });

  const check = async (run: (filter: CompiledFilter) => Promise<string[]>, logIds: readonly string[], dialect: 'duckdb' | 'clickhouse', load: (rows: Row[]) => Promise<void>) => {
    await fc.assert(
      fc.asyncProperty(scenario(logIds), async ({ rows, was, now }) => {
        await load(rows);
        const expect = (keep: (r: Row) => boolean) => rows.filter(keep).map(key).sort();
        assert.deepEqual(await run(loadedAt(now, dialect)), expect((r) => isLoaded(now, r)), 'loaded at now');
        assert.deepEqual(await run(loadedAt(was, dialect, false)), expect((r) => !isLoaded(was, r)), 'not loaded at was');
        const between = loadedBetween(was, now, dialect);
        const want = expect((r) => isLoaded(now, r) && !isLoaded(was, r));
        if (between) assert.deepEqual(await run(between), want, 'loaded between');
        else assert.deepEqual(want, [], 'no log moved on: none loaded between');
      }),
      { numRuns: 60 },
    );
  };

  describe('DuckDB (one log)', () => {
    let connection: DuckDBConnection;
    before(async () => {
      connection = await (await DuckDBInstance.create(':memory:')).connect();
      await connection.run('CREATE TABLE events (log_id VARCHAR, seq BIGINT)');
    });
    test('each condition selects exactly the rows its definition names', async () => {
      const run = async (f: CompiledFilter) =>
        (await connection.runAndReadAll(`SELECT log_id, seq FROM events WHERE ${f.where}`, [...f.params] as never)).getRows().map(([log, seq]) => `${String(log)}.${Number(seq)}`).sort();
      await check(run, [''], 'duckdb', async (rows) => {
        await connection.run('DELETE FROM events');
        for (const r of rows) await connection.run('INSERT INTO events VALUES (?, ?)', [r.log, r.seq]);
      });
    });
  });

  legs.clickhouse().describe('ClickHouse (many logs; PREWHERE of seq ranges)', () => {
    let client: ClickHouseClient;
    const table = `default.loaded_positions_test_${process.pid}`;
    before(async () => {
      client = createClient({ url: parseClickHouseUrl(clickhouseUrl!).hosts[0], log: { level: 127 as never } });
      await client.command({ query: `CREATE TABLE ${table} (log_id String, seq UInt64) ENGINE = MergeTree ORDER BY tuple()` });
    });
    after(async () => {
      await client.command({ query: `DROP TABLE IF EXISTS ${table}` });
      await client.close();
    });
    test('each condition selects exactly the rows its definition names, with and without its PREWHERE', async () => {
      const run = async (f: CompiledFilter) => {
        const select = async (prewhere: boolean) => {
          const pre = prewhere && f.prewhere ? `PREWHERE ${bindParams(f.prewhere.where, f.prewhere.params)} ` : '';
          const result = await client.query({ query: `SELECT log_id, seq FROM ${table} ${pre}WHERE ${bindParams(f.where, f.params)}`, format: 'JSONEachRow' });
          return (await result.json<{ log_id: string; seq: string }>()).map((r) => `${r.log_id}.${Number(r.seq)}`).sort();
        };
        const withPrewhere = await select(true);
        assert.deepEqual(withPrewhere, await select(false), 'the PREWHERE drops no row the condition keeps');
        return withPrewhere;
      };
      await check(run, logs, 'clickhouse', async (rows) => {
        await client.command({ query: `TRUNCATE TABLE ${table}` });
        if (rows.length) await client.insert({ table, values: rows.map((r) => ({ log_id: r.log, seq: r.seq })), format: 'JSONEachRow' });
      });
    });
  });
});
