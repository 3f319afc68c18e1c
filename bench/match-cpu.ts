// npm run bench:match — in-process CPU of match monitors per event: bench:monitors'
// 100 monitors and realistic events, the matcher itself (MatchEvaluator.matchAppended, warm
// cache) over 1,000-event batches made by ingest's parser, beside the same run's cost of that
// parsing (the peer: work every ingested event costs anyway). BENCH_MONITORS changes the count.
import { MatchEvaluator } from '../src/monitors/matcher.js';
import type { MonitorsTable } from '../src/monitors/tables.js';
import { parseNdjson } from '../src/ingest/native/ndjson.js';
import { pino } from 'pino';

const gameEvents = ['player_join', 'player_leave', 'match_start', 'round_end', 'kill', 'purchase', 'chat_message'];
const gameMaps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass', 'vertigo', 'ancient'];
const regions = ['eu-west-1', 'us-east-2', 'ap-south-1', 'sa-east-1'];
/** bench:monitors' realistic event (every canonical field, RFC 3339 ts, a 4-key payload) as an NDJSON line. */
function realisticLine(n: number, ts: number): string {
  const event = gameEvents[n % gameEvents.length]!;
  const map = gameMaps[n % gameMaps.length]!;
  const actor = `player-${(n * 7919) % 50000}`;
  return JSON.stringify({
    ts: new Date(ts).toISOString(),
    severity: n % 10 === 0 ? 'warn' : 'info',
    event,
    actor,
    source: `game-server/${regions[n % regions.length]}/node-${n % 16}`,
    message: `${actor} ${event} on ${map}`,
    payload: { map, ping: (n * 13) % 250, player_id: `p_${String((n * 7919) % 50000).padStart(10, '0')}`, round: n % 30 },
  });
}
const rule = (k: number) => (k % 2 === 0 ? `payload.rule == "r${k}."` : `payload.rule:"r${k}."`);
const shapes = [
  (k: number) => `severity >= error AND source:game-server/eu-west-1* AND ${rule(k)}`,
  (k: number) => `event:anticheat.flag AND payload.score > 0.9 AND ${rule(k)}`,
  (k: number) => `payload.ping > 200 AND payload.map:dust2 AND ${rule(k)}`,
  (k: number) => `actor:player-1* AND "aimbot" AND ${rule(k)}`,
  (k: number) => `(event:kill OR event:anticheat.flag) AND severity >= warn AND ${rule(k)}`,
  (k: number) => `dataset:game AND payload.round >= 25 AND NOT actor:bot-* AND ${rule(k)}`,
  (k: number) => `source:*node-1* AND payload.player_id:p_00000* AND ${rule(k)}`,
  (k: number) => `event in (purchase, chat_message, anticheat.flag) AND payload.ping < 100 AND ${rule(k)}`,
  (k: number) => `"on nuke" AND payload.rule exists AND ${rule(k)}`,
];
const busyQuery = (k: number) => `severity >= warn AND payload.ping >= 200 AND source:*node-${(2 * k) % 16}`;
const count = Number(process.env.BENCH_MONITORS ?? 100);
const rows = Array.from({ length: count }, (_, k): MonitorsTable => ({
  id: `m${k}`, name: `m${k}`, kind: 'match', q: k >= count - 10 ? busyQuery(k) : shapes[k % shapes.length]!(k), muted_until: null, group_window: '10s', channel_ids: '[]',
}) as unknown as MonitorsTable);
let notified = 0;
const matcher = new MatchEvaluator({
  clock: { now: () => Date.now() } as never,
  // No channel: each notification is its monitor's last_match_at alone (matcher.ts notify).
  notifications: { prepare: async () => ({ rows: [] }), store: async () => undefined, wake: () => undefined },
  db: {} as never,
  recordMatch: async () => { notified++; },
  load: async () => rows,
  datasets: async () => [{ id: 'ds1', name: 'game' }],
  apiUrl: () => 'http://localhost',
  log: pino({ level: 'silent' }),
  monotonic: () => 0, // the cache stays warm: the measure is matching, not reloading
});
const tenant = { orgId: 'o', projectId: 'p', mode: 'live' } as never;
const now = Date.now();
// The events as ingest makes them from the request (src/ingest/native/ndjson.ts), as the server hands them to the matcher.
const lines = Array.from({ length: 32 }, (_, b) => Array.from({ length: 1000 }, (_, i) => realisticLine(b * 1000 + i, now - 60_000 + i)));
const batches = lines.map((batch) => parseNdjson(Buffer.from(batch.join('\n')), { datasetId: 'ds1', defaultSeverity: 1, now, overflowFrom: undefined }).events);
matcher.matchAppended(tenant, batches[0]!);
await new Promise((r) => setTimeout(r, 50));
// The peer: ingest's own parsing of the same requests into events (parseNdjson), which every ingest does anyway.
const bodies = lines.map((batch) => Buffer.from(batch.join('\n')));
const measure = (work: () => number): number[] => {
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = process.cpuUsage();
    let n = 0;
    const until = performance.now() + 700;
    while (performance.now() < until) n += work();
    const used = process.cpuUsage(t0);
    runs.push((used.user + used.system) / n);
  }
  return runs.sort((a, b) => a - b);
};
let sink = 0;
const parse = measure(() => {
  let n = 0;
  for (const body of bodies) {
    const parsed = parseNdjson(body, { datasetId: 'ds1', defaultSeverity: 1, now, overflowFrom: undefined });
    sink += parsed.events.length;
    n += parsed.events.length;
  }
  return n;
});
const match = measure(() => {
  let n = 0;
  for (const batch of batches) { matcher.matchAppended(tenant, batch); n += batch.length; }
  return n;
});
const fmtRuns = (runs: number[]) => `median ${runs[3]!.toFixed(2)} µs (runs ${runs.map((x) => x.toFixed(2)).join(' ')})`;
console.log(`${count} match monitors, CPU per event: matching ${fmtRuns(match)}`);
console.log(`peer, ingest parsing the event (parseNdjson): ${fmtRuns(parse)}; matching ÷ parse = ${(match[3]! / parse[3]!).toFixed(2)} (${notified} notifications, sink ${sink & 1})`);
await matcher.stop();
