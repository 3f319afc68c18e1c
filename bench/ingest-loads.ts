// npx tsx bench/ingest-loads.ts — what a load's size costs the DuckDB loader: the realistic shape
// of bench:ingest (8 tenants, 1,000 events per record) encoded as the log's records, loaded
// through the store's own DuckDbEngine.load (chunks, appender, rollup, position, COMMIT, the
// loader's checkpoints) in loads of at most BENCH_LOAD_SIZES events (the records that fit the
// room left in the open row group, as the log's loader takes them) (2000,8000,24000), with DuckDB's
// threads BENCH_THREADS (2; "1,2" compares), a fresh file per run, BENCH_EVENTS events each
// (240,000), BENCH_ROUNDS rounds alternating (3). CPU per event over all threads of this process
// (process.cpuUsage): the loader's side of ingest without HTTP or the log. A loader that keeps
// up takes small loads; OPS_EVENTS_LOAD_INTERVAL_MS makes them larger (docs/events-engine.md,
// "Load interval").
import fs from 'node:fs';
import os from 'node:os';
import { DuckDbEngine } from '../src/engine/duckdb/duckdb-tables.js';
import { encodeBatch } from '../src/engine/wal/event-batch.js';
import { recordsForLoad } from '../src/engine/wal/wal-loader.js';
import { newEventId } from '../src/shared/ids.js';
import type { NewEvent } from '../src/engine/event-store.js';
import { fmt, median, tempDir } from './support.js';

const total = Number(process.env.BENCH_EVENTS ?? 240_000);
const sizes = (process.env.BENCH_LOAD_SIZES ?? '2000,8000,24000').split(',').map(Number);
const threads = (process.env.BENCH_THREADS ?? '2').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const perRecord = 1000;
const gameEvents = ['player_join', 'player_leave', 'match_start', 'round_end', 'kill', 'purchase', 'chat_message'];
const gameMaps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass', 'vertigo', 'ancient'];
const regions = ['eu-west-1', 'us-east-2', 'ap-south-1', 'sa-east-1'];
const base = Date.now() - 3_600_000;
const tenants = Array.from({ length: 8 }, (_, i) => ({ orgId: `org_${i >> 1}`, projectId: `prj_${i}`, mode: 'live' as const }));
const records: Buffer[] = [];
for (let r = 0; r < total / perRecord; r++) {
  const events: NewEvent[] = [];
  for (let i = 0; i < perRecord; i++) {
    const n = r * perRecord + i;
    events.push({
      datasetId: 'ds_01JDZQ4X0000000000000000AB',
      eventId: newEventId(),
      clientEventId: false,
      ts: base + n * 3,
      severity: i % 10 === 0 ? 2 : 1,
      bytesRaw: 211,
      event: gameEvents[n % gameEvents.length]!,
      actor: `player-${(n * 7919) % 50000}`,
      source: `game-server/${regions[n % regions.length]}/node-${n % 16}`,
      message: '',
      payload: JSON.stringify({ map: gameMaps[n % gameMaps.length], ping: (n * 13) % 250, player_id: `p_${String((n * 7919) % 50000).padStart(10, '0')}`, round: n % 30 }),
    });
  }
  records.push(encodeBatch(tenants[r % tenants.length]!, base, events));
}

const results = new Map<string, { cpu: number[]; rate: number[] }>();
for (let round = 1; round <= rounds; round++) {
  for (const th of threads) {
    for (const size of sizes) {
      const dir = tempDir('bench-loads-');
      const engine = await DuckDbEngine.open({ dir, threads: th });
      const perLoad = Math.max(1, Math.round(size / perRecord));
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      let seq = 0;
      // Loads chosen as the log's loader chooses them: whole records within the size and the room left in DuckDB's open row group.
      for (let r = 0; r < records.length; ) {
        const chosen = recordsForLoad(records.slice(r, r + perLoad).map(() => ({ count: perRecord })), perLoad * perRecord, engine.loadRoom());
        const load = records.slice(r, r + chosen.length).map((body, k) => ({ firstSeq: seq + 1 + k * perRecord, body }));
        r += load.length;
        seq += load.length * perRecord;
        await engine.load(load, seq);
      }
      const cpu = process.cpuUsage(cpuBefore);
      const seconds = (performance.now() - started) / 1000;
      await engine.close();
      fs.rmSync(dir, { recursive: true, force: true });
      const key = `threads ${th}, ${fmt(perLoad * perRecord)} events a load`;
      const entry = results.get(key) ?? { cpu: [], rate: [] };
      entry.cpu.push((cpu.user + cpu.system) / total);
      entry.rate.push(total / seconds);
      results.set(key, entry);
      console.log(`round ${round}  ${key.padEnd(36)} ${fmt((cpu.user + cpu.system) / total, 2)} µs/event, ${fmt(total / seconds)} events/s   (load average ${fmt(os.loadavg()[0]!, 1)})`);
    }
  }
}
console.log(`\nthe loader alone, ${fmt(total)} realistic events a run, medians of ${rounds} rounds (CPU over all threads)`);
for (const [key, e] of results) console.log(`  ${key.padEnd(36)} ${fmt(median(e.cpu), 2)} µs/event (${e.cpu.map((x) => fmt(x, 2)).join(' / ')}), ${fmt(median(e.rate))} events/s`);
