// Hot payload keys on the whole write path. Two comparisons, each in alternating
// rounds so the machine's load falls on every way alike; HTTP, parsing, the log and the loader
// all count (bench/hot-keys-load.ts measures the loader alone):
//
// - default settings: a server as it starts with no setting (OPS_HOT_KEYS_AUTO on: the
//   background task chooses the keys of the realistic shape's events — map, ping, round; its
//   player_id is identifier-like — within two intervals of their first events) against a server
//   with OPS_HOT_KEYS_AUTO=false, the same realistic events to one dataset of each (goals: ≥ 90%
//   of the events/s, ≤ 115% of the server CPU per event);
// - pinned: on the OPS_HOT_KEYS_AUTO=false server, the 8-key payload of bench/hot-keys-load.ts
//   sent to two datasets, one with the 8 keys pinned (PATCH /datasets/{name} hot_keys) and one
//   without.
//
// The default server's rounds start once its dataset has keys (GET /datasets, polled) and their
// filling of the warm-up's rows had BENCH_HOT_SETTLE_SECONDS (10) to end. On DuckDB, then on
// ClickHouse when one is found (each server a database of its own).
// Used by bench/ingest.ts (`npm run bench:ingest`; BENCH_HOT=0 leaves it out, BENCH_HOT_ONLY=1
// runs only it; BENCH_HOT_SHAPE=low swaps the two identifier-like keys of the pinned payload for
// low-cardinality ones; BENCH_HOT_ENGINES=duckdb or =clickhouse runs one engine).
import os from 'node:os';
import { round, type Route, type RoundResult } from './ingest-routes.js';
import { hotPayload, hotPayloadKeys } from './hot-payload.js';
import { fmt, median } from './support.js';

const regions = ['eu-west', 'eu-north', 'us-east', 'ap-south'];
const lowCardinality = process.env.BENCH_HOT_SHAPE === 'low';
const pinnedKeys = hotPayloadKeys(lowCardinality);

function event(n: number, base: number): Record<string, unknown> {
  return {
    ts: new Date(base + n * 37 + (n % 11)).toISOString(),
    severity: n % 10 === 0 ? 'warn' : 'info',
    event: ['match_start', 'match_end', 'kill', 'purchase'][n % 4],
    actor: `player-${(n * 7919) % 50000}`,
    source: `game-server/${regions[n % regions.length]}/node-${n % 16}`,
    payload: hotPayload(n, lowCardinality),
  };
}

function bodies(perRequest: number): Buffer[] {
  const base = Date.now() - 3_600_000;
  return Array.from({ length: 32 }, (_, b) =>
    Buffer.from(Array.from({ length: perRequest }, (_, i) => JSON.stringify(event(b * perRequest + i, base))).join('\n')),
  );
}

async function call(apiUrl: string, token: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

export interface HotServer {
  apiUrl: string;
  pid: number;
  token: string;
  stop(): Promise<void>;
}

export interface HotKeysBenchDeps {
  /** A fresh server with these settings beyond the bench's own (data directory, one token, log level, no rate limit). */
  server(env: Record<string, string>): Promise<HotServer>;
  /** The realistic shape's NDJSON bodies (bench/ingest.ts). */
  realistic: Buffer[];
  /** Per engine, the settings that put the events there ({} for DuckDB); each call a database of its own. */
  engines: Array<{ name: string; env: () => Record<string, string>; done?: () => Promise<void> }>;
}

const acknowledged = (status: number, body: string) => {
  if (status !== 200) throw new Error(`ingest: ${status} ${body}`);
  return (JSON.parse(body) as { ingested: number }).ingested;
};

const ndjson = (key: string, name: string, path: string, sent: Buffer[]): Route => ({ key, name, path, contentType: 'application/x-ndjson', bodies: sent, acknowledged });

export async function benchHotKeys(deps: HotKeysBenchDeps, options: { clients: number; perRequest: number; seconds: number; rounds: number }): Promise<void> {
  const settleMs = Number(process.env.BENCH_HOT_SETTLE_SECONDS ?? 10) * 1000;
  for (const engine of deps.engines) {
    const off = await deps.server({ OPS_HOT_KEYS_AUTO: 'false', ...engine.env() });
    const defaults = await deps.server(engine.env());
    try {
      for (const name of ['bench-cold', 'bench-pinned', 'bench-realistic']) await call(off.apiUrl, off.token, 'POST', '/v1/datasets', { name });
      await call(off.apiUrl, off.token, 'PATCH', '/v1/datasets/bench-pinned', { hot_keys: pinnedKeys });
      await call(defaults.apiUrl, defaults.token, 'POST', '/v1/datasets', { name: 'bench-realistic' });
      const sent = bodies(options.perRequest);
      const ways: Array<{ server: HotServer; route: Route }> = [
        { server: off, route: ndjson('cold', 'pinned: none', '/v1/datasets/bench-cold/ingest', sent) },
        { server: off, route: ndjson('pinned', `pinned: ${pinnedKeys.length} keys`, '/v1/datasets/bench-pinned/ingest', sent) },
        { server: off, route: ndjson('off', 'realistic, AUTO=false', '/v1/datasets/bench-realistic/ingest', deps.realistic) },
        { server: defaults, route: ndjson('default', 'realistic, defaults', '/v1/datasets/bench-realistic/ingest', deps.realistic) },
      ];
      const run = (w: (typeof ways)[number], ms: number) => round(w.server.apiUrl, w.server.pid, w.server.token, w.route, options.clients, options.perRequest, ms);
      for (const way of ways) await run(way, 1_000);
      // The default server's keys, chosen in the background from the warm-up's events.
      const waited = performance.now();
      let keys: Array<{ key: string }> | undefined;
      for (let i = 0; i < 600 && !keys; i++) {
        const list = (await call(defaults.apiUrl, defaults.token, 'GET', '/v1/datasets')).datasets as Array<{ name: string; hot_keys?: Array<{ key: string }> }>;
        keys = list.find((d) => d.name === 'bench-realistic')?.hot_keys;
        if (!keys) await new Promise((r) => setTimeout(r, 1_000));
      }
      const chosenAfter = (performance.now() - waited) / 1000;
      await new Promise((r) => setTimeout(r, settleMs));
      const results = new Map<string, RoundResult[]>(ways.map((w) => [w.route.key, []]));
      const loadBefore = os.loadavg()[0]!;
      for (let r = 0; r < options.rounds; r++) for (const way of ways) results.get(way.route.key)!.push(await run(way, options.seconds * 1000));
      const loadAfter = os.loadavg()[0]!;
      const rate = (key: string) => median(results.get(key)!.map((r) => r.eventsPerSecond));
      const cpu = (key: string) => median(results.get(key)!.map((r) => r.cpuPerEvent));
      console.log(
        `ingest with hot payload keys, ${engine.name} (${options.clients} clients, ${options.rounds} alternating rounds of ${options.seconds} s, medians; load average ${fmt(loadBefore, 1)} → ${fmt(loadAfter, 1)} on ${os.cpus().length} cores)`,
      );
      console.log(`  default settings: keys chosen in the background ${keys ? `(${keys.map((k) => k.key).join(', ')}) ${fmt(chosenAfter, 0)} s after the warm-up` : 'NOT within 10 minutes'}`);
      for (const way of ways) {
        const rounds = results.get(way.route.key)!;
        const base = way.route.key === 'pinned' ? 'cold' : way.route.key === 'default' ? 'off' : undefined;
        const goals = way.route.key === 'default' ? ' (goals ≥ 90%, ≤ 115%)' : '';
        const ratio = base ? `   ${fmt((100 * rate(way.route.key)) / rate(base))}% of the events/s, ${fmt((100 * cpu(way.route.key)) / cpu(base))}% of the server CPU per event of "${ways.find((w) => w.route.key === base)!.route.name}"${goals}` : '';
        console.log(
          `  ${way.route.name.padEnd(22)} ${fmt(rate(way.route.key)).padStart(8)} events/s, ${fmt(cpu(way.route.key), 2)} µs server CPU/event (main thread ${fmt(median(rounds.map((r) => r.mainPerEvent)), 2)}, events worker ${fmt(median(rounds.map((r) => r.workerPerEvent)), 2)})  (rounds ${rounds.map((v) => fmt(v.eventsPerSecond)).join(', ')})${ratio}`,
        );
      }
    } finally {
      await off.stop();
      await defaults.stop();
      await engine.done?.();
    }
  }
}
