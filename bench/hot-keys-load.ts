// npx tsx bench/hot-keys-load.ts — what hot payload keys (issue #31) cost the loader: the same
// events (a realistic shape with 8 payload keys) built into the store's data chunks
// (EventChunkBuilder, what the loader appends) and appended to a DuckDB file with the store's
// settings, COMMIT every 48,000 rows like the loader, without hot keys and with all 8 hot; then
// bytes per event on disk after a CHECKPOINT. Alternating runs (BENCH_RUNS, default 3), medians.
// The HTTP and write-ahead-log side of ingest does not change with hot keys: this is the part
// that does.
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { schemaSql } from '../src/engine/duckdb/duckdb-sql.js';
import { EventChunkBuilder, type ChunkRow } from '../src/engine/duckdb/duckdb-chunk.js';
import { eventStoreSettings } from '../src/engine/duckdb/duckdb-tables.js';
import { hotColumnsOf, hotColumnType, nextSlots, type HotLayout } from '../src/engine/hot-columns.js';
import { fmt, median, tempDir } from './support.js';

const events = Number(process.env.BENCH_EVENTS ?? 400_000);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const perCommit = 48_000;
const maps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass', 'vertigo', 'ancient'];
const weapons = ['ak47', 'm4a1', 'awp', 'deagle', 'mp9', 'famas'];

const rows: ChunkRow[] = Array.from({ length: events }, (_, n) => ({
  seq: n + 1,
  eventId: `0190${String(n).padStart(4, '0').slice(-4)}-0000-7000-8000-${String(n).padStart(12, '0')}`,
  ts: 1_714_000_000_000 + n * 10,
  ingestedAt: 1_714_000_000_000 + n * 10 + 3,
  severity: n % 10 === 0 ? 2 : 1,
  event: ['match_start', 'match_end', 'kill', 'purchase'][n % 4]!,
  actor: `player-${(n * 7919) % 5000}`,
  source: `srv-${n % 20}`,
  message: '',
  payload: JSON.stringify({
    map: maps[n % maps.length],
    ping: (n * 13) % 250,
    player_id: `p_${String((n * 7919) % 50000).padStart(10, '0')}`,
    round: n % 30,
    region: `eu-${n % 4}`,
    ranked: n % 3 === 0,
    weapon: weapons[n % weapons.length],
    steam_id: `7656119${String((n * 104729) % 1e10).padStart(10, '0')}`,
  }),
  bytesRaw: 260,
}));
const layout: HotLayout = {
  id: 1,
  datasetId: 'ds_bench',
  slots: nextSlots([], [
    { pointer: '/map', type: 'string' },
    { pointer: '/ping', type: 'number' },
    { pointer: '/player_id', type: 'string' },
    { pointer: '/round', type: 'number' },
    { pointer: '/region', type: 'string' },
    { pointer: '/ranked', type: 'boolean' },
    { pointer: '/weapon', type: 'string' },
    { pointer: '/steam_id', type: 'string' },
  ])!,
};

const dir = tempDir('ops-bench-hot-');

async function load(hot: boolean): Promise<{ perSecond: number; cpuUs: number; bytesPerEvent: number }> {
  const file = path.join(dir, `events-${hot}.duckdb`);
  fs.rmSync(file, { force: true });
  fs.rmSync(`${file}.wal`, { force: true });
  const instance = await DuckDBInstance.create(file, eventStoreSettings(path.join(dir, 'tmp')));
  const c = await instance.connect();
  await c.run(schemaSql);
  const columns = hot ? hotColumnsOf(layout.slots) : [];
  for (const name of columns) await c.run(`ALTER TABLE events ADD COLUMN ${name} ${hotColumnType(name)}`);
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (let from = 0; from < rows.length; from += perCommit) {
    await c.run('BEGIN TRANSACTION');
    const appender = await c.createAppender('events');
    let chunk = new EventChunkBuilder(1, layout.datasetId, hot ? layout : undefined, columns);
    for (let i = from; i < Math.min(rows.length, from + perCommit); i++) {
      chunk.add(rows[i]!);
      if (chunk.full) {
        appender.appendDataChunk(chunk.build());
        chunk = new EventChunkBuilder(1, layout.datasetId, hot ? layout : undefined, columns);
      }
    }
    if (chunk.size) appender.appendDataChunk(chunk.build());
    appender.flushSync();
    appender.closeSync();
    await c.run('COMMIT');
  }
  const ms = performance.now() - t;
  const used = process.cpuUsage(cpu);
  await c.run('CHECKPOINT');
  c.closeSync();
  instance.closeSync();
  const bytes = fs.statSync(file).size;
  return { perSecond: (events / ms) * 1000, cpuUs: (used.user + used.system) / events, bytesPerEvent: bytes / events };
}

const results = { plain: [] as Array<Awaited<ReturnType<typeof load>>>, hot: [] as Array<Awaited<ReturnType<typeof load>>> };
for (let r = 0; r < runs; r++) {
  results.plain.push(await load(false));
  results.hot.push(await load(true));
}
const m = (list: Array<Awaited<ReturnType<typeof load>>>, k: 'perSecond' | 'cpuUs' | 'bytesPerEvent') => median(list.map((x) => x[k]));
console.log(`hot keys, loader side: ${fmt(events)} events of ~${fmt(rows[0]!.payload.length)} payload bytes, ${runs} alternating runs (median)`);
for (const [name, list] of [['no hot keys', results.plain], ['8 hot keys', results.hot]] as const) {
  console.log(`  ${name.padEnd(12)} ${fmt(m(list, 'perSecond')).padStart(9)} events/s   ${fmt(m(list, 'cpuUs'), 2)} µs CPU/event (all threads)   ${fmt(m(list, 'bytesPerEvent'), 1)} bytes/event on disk`);
}
console.log(
  `  8 hot keys: ${fmt((m(results.hot, 'perSecond') / m(results.plain, 'perSecond')) * 100, 0)}% of the events/s, ` +
    `${fmt((m(results.hot, 'bytesPerEvent') / m(results.plain, 'bytesPerEvent') - 1) * 100, 1)}% more bytes per event`,
);
fs.rmSync(dir, { recursive: true, force: true });
