// npx tsx bench/hot-keys-load.ts — what hot payload keys cost the loader: the same
// events (a realistic shape with 8 payload keys) encoded as the write-ahead log's records
// (encodeBatch, 100 events each), read back and built into the store's data chunks as the
// loader does (BatchReader, EventChunkBuilder.addEncoded, one reused DuckDBDataChunk) and
// appended to a DuckDB file with the store's settings, COMMIT every 48,000 rows and CHECKPOINT
// before a row group would overflow, like the loader,
// without hot keys and with all 8 hot (and, BENCH_HOT_ONLY=map,ping,… , with only some of them;
// BENCH_SHAPE=low, 8 keys none of which is identifier-like);
// then bytes per event on disk after a CHECKPOINT. Alternating runs (BENCH_RUNS, default 3),
// medians. CPU per event by thread from /proc: this thread (the chunk building and the
// appender's synchronous work, the events worker's part in the store), the threads DuckDB
// started, and the rest (libuv's pool, where COMMIT runs, and V8's helpers, GC among them).
// The HTTP and write-ahead-log side of ingest does not change with hot keys: this is the part
// that does.
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBDataChunk, DuckDBInstance } from '@duckdb/node-api';
import { schemaSql } from '../src/engine/duckdb/duckdb-sql.js';
import { EventChunkBuilder } from '../src/engine/duckdb/duckdb-chunk.js';
import { rowGroupRows } from '../src/engine/duckdb/duckdb-loader.js';
import { eventStoreSettings } from '../src/engine/duckdb/duckdb-tables.js';
import { BatchReader, encodeBatch } from '../src/engine/wal/event-batch.js';
import type { NewEvent } from '../src/engine/event-store.js';
import { hotColumnsOf, hotColumnType, nextSlots, type HotKey, type HotLayout } from '../src/engine/hot-columns.js';
import { hotPayload, hotPayloadKeys } from './hot-payload.js';
import { fmt, median, tempDir } from './support.js';

const events = Number(process.env.BENCH_EVENTS ?? 400_000);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const perCommit = 48_000;
/**
 * BENCH_SHAPE=low: the two identifiers (player_id, steam_id: a distinct value nearly every
 * event) replaced by strings of as many bytes and few values (server, patch), so all 8 keys
 * are ones discovery chooses (events/hot-keys.ts).
 */
const lowCardinality = process.env.BENCH_SHAPE === 'low';
const perRecord = 100;
const tenant = { orgId: 'org_bench', projectId: 'prj_bench', mode: 'live' as const };
const datasetId = 'ds_bench';

const all: NewEvent[] = Array.from({ length: events }, (_, n) => ({
  datasetId,
  eventId: `0190${String(n).padStart(4, '0').slice(-4)}-0000-7000-8000-${String(n).padStart(12, '0')}`,
  clientEventId: false,
  ts: 1_714_000_000_000 + n * 10,
  severity: n % 10 === 0 ? 2 : 1,
  event: ['match_start', 'match_end', 'kill', 'purchase'][n % 4]!,
  actor: `player-${(n * 7919) % 5000}`,
  source: `srv-${n % 20}`,
  message: '',
  payload: JSON.stringify(hotPayload(n, lowCardinality)),
  bytesRaw: 260,
}));
const records: Buffer[] = [];
for (let from = 0; from < all.length; from += perRecord) records.push(encodeBatch(tenant, 1_714_000_000_003, all.slice(from, from + perRecord)));
const keys: HotKey[] = hotPayloadKeys(lowCardinality).map(({ key, type }) => ({ pointer: `/${key}`, type }));
const only = process.env.BENCH_HOT_ONLY ? process.env.BENCH_HOT_ONLY.split(',') : undefined;
const layout: HotLayout = { id: 1, datasetId, slots: nextSlots([], only ? keys.filter((k) => only.includes(k.pointer.slice(1))) : keys)! };

/** CPU ns of each of this process's threads so far (Linux /proc schedstat: time on CPU). */
function threadCpu(): Map<number, number> {
  const byTid = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      byTid.set(Number(tid), Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // exited meanwhile
    }
  }
  return byTid;
}
const self = process.pid;
// libuv starts its whole pool at the first piece of work: before the threads are listed.
await fs.promises.stat(import.meta.dirname);
/** The threads that exist without DuckDB: V8's helpers (GC among them) and libuv's pool (COMMIT runs there). */
const before = new Set(threadCpu().keys());

const dir = tempDir('ops-bench-hot-');
interface Result {
  perSecond: number;
  cpuUs: number;
  mainUs: number;
  duckdbUs: number;
  otherUs: number;
  bytesPerEvent: number;
}

async function load(hot: boolean): Promise<Result> {
  const file = path.join(dir, `events-${hot}.duckdb`);
  fs.rmSync(file, { force: true });
  fs.rmSync(`${file}.wal`, { force: true });
  const instance = await DuckDBInstance.create(file, eventStoreSettings(path.join(dir, 'tmp')));
  const duckdbThreads = new Set([...threadCpu().keys()].filter((t) => !before.has(t)));
  const c = await instance.connect();
  await c.run(schemaSql);
  const columns = hot ? hotColumnsOf(layout.slots) : [];
  for (const name of columns) await c.run(`ALTER TABLE events ADD COLUMN ${name} ${hotColumnType(name)}`);
  const threads = threadCpu();
  const cpu = process.cpuUsage();
  const t = performance.now();
  const start = process.hrtime.bigint();
  let data: DuckDBDataChunk | undefined;
  let seq = 1;
  let rowsSinceCheckpoint = 0;
  for (let from = 0; from < records.length; from += perCommit / perRecord) {
    await c.run('BEGIN TRANSACTION');
    const appender = await c.createAppender('events');
    let chunk = new EventChunkBuilder(1, datasetId, hot ? layout : undefined, columns);
    const flush = () => {
      data ??= DuckDBDataChunk.create([...chunk.types]);
      data.reset();
      appender.appendDataChunk(chunk.build(data));
    };
    for (let r = from; r < Math.min(records.length, from + perCommit / perRecord); r++) {
      const batch = new BatchReader(records[r]!);
      while (batch.next()) {
        chunk.addEncoded(seq++, batch);
        if (chunk.full) {
          flush();
          chunk = new EventChunkBuilder(1, datasetId, hot ? layout : undefined, columns);
        }
      }
    }
    if (chunk.size) flush();
    appender.flushSync();
    appender.closeSync();
    await c.run('COMMIT');
    // The loader's rule (duckdb-loader.ts): a CHECKPOINT before the next load would overflow the row group.
    rowsSinceCheckpoint += Math.min(perCommit, events - from * perRecord);
    if (rowsSinceCheckpoint + perCommit > rowGroupRows) {
      await c.run('CHECKPOINT');
      rowsSinceCheckpoint = 0;
    }
  }
  const ms = performance.now() - t;
  // CLOCK_MONOTONIC ns: `perf record -k CLOCK_MONOTONIC` samples of the timed part lie in between.
  if (process.env.BENCH_WINDOWS) console.error(`window ${hot ? 'hot' : 'plain'} ${start} ${process.hrtime.bigint()}`);
  const used = process.cpuUsage(cpu);
  const split = { main: 0, duckdb: 0, other: 0 };
  for (const [tid, ns] of threadCpu()) {
    const us = (ns - (threads.get(tid) ?? 0)) / 1000;
    split[tid === self ? 'main' : duckdbThreads.has(tid) ? 'duckdb' : 'other'] += us;
  }
  await c.run('CHECKPOINT');
  c.closeSync();
  instance.closeSync();
  const bytes = fs.statSync(file).size;
  return {
    perSecond: (events / ms) * 1000,
    cpuUs: (used.user + used.system) / events,
    mainUs: split.main / events,
    duckdbUs: split.duckdb / events,
    otherUs: split.other / events,
    bytesPerEvent: bytes / events,
  };
}

const results = { plain: [] as Result[], hot: [] as Result[] };
// BENCH_WAYS=hot (or plain): one way only, for a profiler.
const ways = process.env.BENCH_WAYS ?? 'plain,hot';
for (let r = 0; r < runs; r++) {
  if (ways.includes('plain')) results.plain.push(await load(false));
  if (ways.includes('hot')) results.hot.push(await load(true));
}
const m = (list: Result[], k: keyof Result) => (list.length ? median(list.map((x) => x[k])) : NaN);
const hotName = `${layout.slots.length} hot keys`;
console.log(`hot keys, loader side: ${fmt(events)} events of ~${fmt(all[0]!.payload.length)} payload bytes, ${runs} alternating runs (median); hot: ${layout.slots.map((s) => s.pointer.slice(1)).join(', ')}`);
console.log(`  ${''.padEnd(12)} ${'events/s'.padStart(9)}   µs CPU/event: all threads | this thread | DuckDB's | others   bytes/event`);
for (const [name, list] of [['no hot keys', results.plain], [hotName, results.hot]] as const) {
  console.log(
    `  ${name.padEnd(12)} ${fmt(m(list, 'perSecond')).padStart(9)}   ${fmt(m(list, 'cpuUs'), 2).padStart(20)} | ${fmt(m(list, 'mainUs'), 2).padStart(11)} | ${fmt(m(list, 'duckdbUs'), 2).padStart(8)} | ${fmt(m(list, 'otherUs'), 2).padStart(6)}   ${fmt(m(list, 'bytesPerEvent'), 1)}`,
  );
}
console.log(
  `  ${hotName}: ${fmt((m(results.hot, 'perSecond') / m(results.plain, 'perSecond')) * 100, 0)}% of the events/s, ` +
    `${fmt((m(results.plain, 'cpuUs') / m(results.hot, 'cpuUs')) * 100, 0)}% of the events per CPU second, ` +
    `${fmt((m(results.hot, 'bytesPerEvent') / m(results.plain, 'bytesPerEvent') - 1) * 100, 1)}% more bytes per event`,
);
fs.rmSync(dir, { recursive: true, force: true });
