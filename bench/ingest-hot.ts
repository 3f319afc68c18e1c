// Hot payload keys on the whole write path (issue #31: "ingest events/s with 8 hot keys ≥ 90% of
// the same run without them"): the same events — the realistic shape's fields with the 8-key
// payload of bench/hot-keys-load.ts — sent as native NDJSON to two datasets of one server, one
// with the 8 keys pinned hot (PATCH /datasets/{name} hot_keys) and one without, in alternating
// rounds so the machine's load falls on both alike. HTTP, parsing, the log and the loader all
// count; bench/hot-keys-load.ts measures the loader alone.
// Used by bench/ingest.ts (`npm run bench:ingest`; BENCH_HOT=0 leaves it out, BENCH_HOT_ONLY=1
// runs only it; BENCH_HOT_SHAPE=low swaps the two identifier-like keys for low-cardinality ones).
import { round, type Route, type RoundResult } from './ingest-routes.js';
import { hotPayload, hotPayloadKeys } from './hot-payload.js';
import { fmt, median } from './support.js';

const regions = ['eu-west', 'eu-north', 'us-east', 'ap-south'];
const lowCardinality = process.env.BENCH_HOT_SHAPE === 'low';
const hotKeys = hotPayloadKeys(lowCardinality);

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

async function call(apiUrl: string, token: string, method: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${apiUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
}

export async function benchHotKeys(
  apiUrl: string,
  pid: number,
  token: string,
  options: { clients: number; perRequest: number; seconds: number; rounds: number },
): Promise<void> {
  await call(apiUrl, token, 'POST', '/v1/datasets', { name: 'bench-cold' });
  await call(apiUrl, token, 'POST', '/v1/datasets', { name: 'bench-hot' });
  await call(apiUrl, token, 'PATCH', '/v1/datasets/bench-hot', { hot_keys: hotKeys });
  const sent = bodies(options.perRequest);
  const acknowledged = (status: number, body: string) => {
    if (status !== 200) throw new Error(`ingest: ${status} ${body}`);
    return (JSON.parse(body) as { ingested: number }).ingested;
  };
  const ways: Route[] = [
    { key: 'cold', name: 'no hot keys', path: '/v1/datasets/bench-cold/ingest', contentType: 'application/x-ndjson', bodies: sent, acknowledged },
    { key: 'hot', name: '8 hot keys', path: '/v1/datasets/bench-hot/ingest', contentType: 'application/x-ndjson', bodies: sent, acknowledged },
  ];
  const results = new Map<string, RoundResult[]>(ways.map((w) => [w.name, []]));
  for (const way of ways) await round(apiUrl, pid, token, way, options.clients, options.perRequest, 1_000);
  for (let r = 0; r < options.rounds; r++) {
    for (const way of ways) results.get(way.name)!.push(await round(apiUrl, pid, token, way, options.clients, options.perRequest, options.seconds * 1000));
  }
  const cold = results.get('no hot keys')!;
  const coldRate = median(cold.map((r) => r.eventsPerSecond));
  const coldCpu = median(cold.map((r) => r.cpuPerEvent));
  console.log(
    `ingest with hot payload keys (same server, ${fmt(sent[0]!.length / options.perRequest)} bytes/event, hot: ${hotKeys.map((k) => k.key).join(', ')}; ${options.clients} clients, ${options.rounds} alternating rounds of ${options.seconds} s; medians)`,
  );
  for (const [name, rounds] of results) {
    const rate = median(rounds.map((r) => r.eventsPerSecond));
    const cpu = median(rounds.map((r) => r.cpuPerEvent));
    const ratio = rounds === cold ? '' : `   ${fmt((100 * rate) / coldRate)}% of the events/s without (goal ≥ 90%); events per server CPU second ${fmt((100 * coldCpu) / cpu)}%`;
    console.log(
      `  ${name.padEnd(14)} ${fmt(rate).padStart(8)} events/s, ${fmt(cpu, 2)} µs server CPU/event (main thread ${fmt(median(rounds.map((r) => r.mainPerEvent)), 2)}, events worker ${fmt(median(rounds.map((r) => r.workerPerEvent)), 2)})  (rounds ${rounds.map((v) => fmt(v.eventsPerSecond)).join(', ')})${ratio}`,
    );
  }
}
