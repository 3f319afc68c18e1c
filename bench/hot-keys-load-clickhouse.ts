// npx tsx bench/hot-keys-load-clickhouse.ts — what hot payload keys cost a load on
// ClickHouse: hot-keys-load.ts's events (a realistic shape with 8 payload keys) loaded through
// ClickHouseEngine.load (RowBinary rows, one INSERT per 48,000 events through the Distributed
// table, as the loader hands it records), into a fresh database without hot keys and into one
// with all 8 hot; events/s, this process's CPU per event (the row building), the ClickHouse
// servers' CPU per event (when they run on this machine), and bytes per event on disk after the
// merges settle. Alternating runs (BENCH_RUNS, default 3), medians. Which ClickHouse: as
// bench:query (bench/clickhouse-support.ts).
import { ClickHouseEngine } from '../src/engine/clickhouse/clickhouse-engine.js';
import { encodeBatch } from '../src/engine/wal/event-batch.js';
import type { NewEvent } from '../src/engine/event-store.js';
import type { HotKey } from '../src/engine/hot-columns.js';
import type { Tenant } from '../src/tenancy/tenant.js';
import { benchDatabaseUrl, ClickHouseHosts, clickHouseServerPids, cpuSecondsOf, dropClickHouseDatabase, findClickHouse } from './clickhouse-support.js';
import { fmt, median } from './support.js';

const count = Number(process.env.BENCH_EVENTS ?? 400_000);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const perLoad = 48_000;
const perRecord = 1_000;
const maps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass', 'vertigo', 'ancient'];
const weapons = ['ak47', 'm4a1', 'awp', 'deagle', 'mp9', 'famas'];
const tenant: Tenant = { orgId: 'org_bench', projectId: 'proj_bench', mode: 'live' };
const datasetId = 'ds_bench';

const events: NewEvent[] = Array.from({ length: count }, (_, n) => ({
  datasetId,
  eventId: `0190${String(n).padStart(4, '0').slice(-4)}-0000-7000-8000-${String(n).padStart(12, '0')}`,
  clientEventId: false,
  ts: 1_714_000_000_000 + n * 10,
  severity: n % 10 === 0 ? 2 : 1,
  bytesRaw: 260,
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
}));
const hotKeys: HotKey[] = [
  { pointer: '/map', type: 'string' },
  { pointer: '/ping', type: 'number' },
  { pointer: '/player_id', type: 'string' },
  { pointer: '/round', type: 'number' },
  { pointer: '/region', type: 'string' },
  { pointer: '/ranked', type: 'boolean' },
  { pointer: '/weapon', type: 'string' },
  { pointer: '/steam_id', type: 'string' },
];
// The log's records, encoded once (the loader reads them from the segment).
const records = Array.from({ length: Math.ceil(count / perRecord) }, (_, r) => ({
  firstSeq: r * perRecord + 1,
  body: encodeBatch(tenant, 1_714_000_000_000, events.slice(r * perRecord, (r + 1) * perRecord)),
}));

const search = await findClickHouse();
if ('skipped' in search) {
  console.log(`ClickHouse skipped: ${search.skipped}`);
  process.exit(0);
}
const found = search;
const pids = clickHouseServerPids();

async function once(hot: boolean): Promise<{ perSecond: number; cpuUs: number; serverUs: number; bytes: number }> {
  const url = benchDatabaseUrl(found.base, hot ? 'hotload' : 'load');
  const hosts = new ClickHouseHosts(url);
  const engine = await ClickHouseEngine.open(url);
  try {
    await engine.loadedSeq();
    if (hot) await engine.setHotKeys(tenant, datasetId, hotKeys);
    const cpu = process.cpuUsage();
    const server = cpuSecondsOf(pids);
    const t = performance.now();
    const perLoadRecords = perLoad / perRecord;
    for (let i = 0; i < records.length; i += perLoadRecords) {
      const batch = records.slice(i, i + perLoadRecords);
      const last = batch[batch.length - 1]!;
      await engine.load(batch, last.firstSeq + perRecord - 1);
    }
    const ms = performance.now() - t;
    const used = process.cpuUsage(cpu);
    const serverSeconds = cpuSecondsOf(pids) - server;
    await hosts.waitForMerges(120_000);
    const parts = await hosts.parts();
    return { perSecond: count / (ms / 1000), cpuUs: (used.user + used.system) / count, serverUs: (serverSeconds * 1e6) / count, bytes: parts.bytes / parts.rows };
  } finally {
    await engine.close();
    await hosts.close();
    await dropClickHouseDatabase(url);
  }
}

console.log(`hot keys on ClickHouse ${found.version} (${found.hosts.length} hosts): ${fmt(count)} events, loads of ${fmt(perLoad)}, ${runs} alternating runs`);
const results: Record<'plain' | 'hot', Array<Awaited<ReturnType<typeof once>>>> = { plain: [], hot: [] };
for (let r = 0; r < runs; r++) {
  for (const hot of [false, true]) {
    const result = await once(hot);
    results[hot ? 'hot' : 'plain'].push(result);
    console.log(`  run ${r + 1} ${hot ? '8 hot keys ' : 'no hot keys'}: ${fmt(result.perSecond)} events/s, ${fmt(result.cpuUs, 2)} µs CPU/event here, ${fmt(result.serverUs, 2)} µs ClickHouse CPU/event, ${fmt(result.bytes, 1)} bytes/event`);
  }
}
const med = (kind: 'plain' | 'hot', k: 'perSecond' | 'cpuUs' | 'serverUs' | 'bytes') => median(results[kind].map((x) => x[k]));
console.log('medians:');
for (const kind of ['plain', 'hot'] as const) {
  console.log(`  ${kind === 'hot' ? '8 hot keys ' : 'no hot keys'}  ${fmt(med(kind, 'perSecond'))} events/s   ${fmt(med(kind, 'cpuUs'), 2)} µs here   ${fmt(med(kind, 'serverUs'), 2)} µs ClickHouse   ${fmt(med(kind, 'bytes'), 1)} bytes/event`);
}
console.log(
  `8 hot keys: ${fmt((med('hot', 'perSecond') / med('plain', 'perSecond')) * 100, 1)}% of the events/s (goal ≥ 90%), ` +
    `${fmt((med('hot', 'bytes') / med('plain', 'bytes') - 1) * 100, 1)}% more bytes per event (goal ≤ 15%)`,
);
process.exit(0);
