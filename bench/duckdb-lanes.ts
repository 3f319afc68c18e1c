// Scratch measurement (docs/monitors.md "Beside the API"): does an API
// read on its own DuckDB connection proceed while another connection runs the monitors' scans,
// and how does the `threads` setting change that? For each `threads` value: an events-like table
// of BENCH_ROWS rows (bench:query's shape), then an API-like page query (filter, ORDER BY ts DESC
// LIMIT 101) timed alone and while a second connection runs a 24 h `count() by source` scan back
// to back. Printed: the page's median and p90, alone and beside, and the scans per second.
//   npx tsx bench/duckdb-lanes.ts        (BENCH_ROWS=2000000, BENCH_THREADS=1,2,3)
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import os from 'node:os';

const rows = Number(process.env.BENCH_ROWS ?? 2_000_000);
const threadsList = (process.env.BENCH_THREADS ?? '1,2,3').split(',').map(Number);
const samples = Number(process.env.BENCH_SAMPLES ?? 40);

const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

async function page(c: DuckDBConnection, n: number): Promise<number> {
  const t = performance.now();
  await c.runAndReadAll(`SELECT * FROM events WHERE tenant = 1 AND severity >= 3 AND source = 'srv-${n % 20}' ORDER BY ts DESC LIMIT 101`);
  return performance.now() - t;
}

async function main(): Promise<void> {
  console.log(`duckdb-lanes: ${rows} rows, ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')}`);
  for (const threads of threadsList) {
    const db = await DuckDBInstance.create(':memory:', { threads: String(threads), memory_limit: '192MB', preserve_insertion_order: 'false' });
    const setup = await db.connect();
    await setup.run(`CREATE TABLE events AS SELECT 1::UINTEGER AS tenant, i AS seq, (1_700_000_000_000 + i * 40)::BIGINT AS ts, (hash(i) % 5)::UTINYINT AS severity,
      'evt.' || (i % 50) AS event, 'srv-' || (i % 20) AS source, 'message number ' || i AS message,
      json_object('map', ['dust', 'nuke', 'inferno'][(i % 3) + 1], 'ping', (i * 7919) % 400)::VARCHAR AS payload FROM range(${rows}) t(i)`);
    setup.closeSync();
    const api = await db.connect();
    const monitors = await db.connect();
    for (let i = 0; i < 5; i++) await page(api, i);
    const alone: number[] = [];
    for (let i = 0; i < samples; i++) alone.push(await page(api, i));
    let scanning = true;
    let scans = 0;
    const t0 = performance.now();
    const loop = (async () => {
      while (scanning) {
        await monitors.runAndReadAll(`SELECT source, count(*) FROM events WHERE tenant = 1 AND severity >= 3 GROUP BY source ORDER BY 2 DESC LIMIT 100`);
        scans++;
      }
    })();
    const beside: number[] = [];
    for (let i = 0; i < samples; i++) beside.push(await page(api, i));
    scanning = false;
    await loop;
    const seconds = (performance.now() - t0) / 1000;
    console.log(
      `  threads=${threads}: page alone p50 ${q(alone, 0.5).toFixed(1)} / p90 ${q(alone, 0.9).toFixed(1)} ms; beside the scans p50 ${q(beside, 0.5).toFixed(1)} / p90 ${q(beside, 0.9).toFixed(1)} ms ` +
        `(${(q(beside, 0.5) / q(alone, 0.5)).toFixed(2)}× at p50); scans ${(scans / seconds).toFixed(1)}/s; load ${os.loadavg()[0]!.toFixed(1)}`,
    );
    api.closeSync();
    monitors.closeSync();
    db.closeSync();
  }
}

await main();
