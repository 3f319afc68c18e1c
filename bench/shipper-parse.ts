// tsx bench/shipper-parse.ts — one core, in process: the CPU per event of each ingest route's
// parsing and mapping up to the events the store takes (NewEvent[]), on the bench:ingest
// standard shape's bodies (bench/ingest-routes.ts builds them): native NDJSON's parseNdjson,
// Loki JSON and protobuf (decode + mapping + normaliseMapped, as Inserter.insertItems runs it), and the
// Elasticsearch bulk (parse + mapping + normaliseMapped + the answer's text). The server-side
// figures are bench:ingest's; this isolates the part the shipper routes add (docs/benchmarks.md).
import { parseNdjson } from '../src/ingest/native/ndjson.js';
import { normaliseMapped, type IngestDefaults } from '../src/ingest/core/normalise.js';
import { decodeJsonPush, decodeProtobufPush } from '../src/ingest/loki/decode.js';
import { toShippedEvents } from '../src/ingest/loki/mapping.js';
import { parseBulk } from '../src/ingest/elastic/bulk-parse.js';
import { toShippedEvent } from '../src/ingest/elastic/mapping.js';
import { bulkAnswer } from '../src/ingest/elastic/answers.js';
import type { IngestItem } from '../src/ingest/core/insert.js';
import type { NewEvent } from '../src/engine/event-store.js';
import { encodeBatch } from '../src/engine/wal/event-batch.js';
import { routeBodies } from './ingest-routes.js';
import { fmt, median } from './support.js';

const perRequest = 1_000;
const base = Date.now() - 3_600_000;
const actions = ['match_start', 'match_end', 'player_join', 'player_leave', 'kill', 'chat', 'purchase'];
const maps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass'];
const bodies: Buffer[] = [];
for (let b = 0; b < 8; b++) {
  const lines: string[] = [];
  for (let i = 0; i < perRequest; i++) {
    const n = b * perRequest + i;
    lines.push(
      JSON.stringify({
        ts: base + b * 40_000 + i,
        severity: i % 10 === 0 ? 'warn' : 'info',
        event: actions[n % actions.length],
        actor: `player-${(n * 7919) % 5000}`,
        message: `player ${(n * 7919) % 5000} ${actions[n % actions.length]} on ${maps[n % 5]}`,
        payload: { map: maps[n % 5], round: n % 30, score: (n * 31) % 1000 },
      }),
    );
  }
  bodies.push(Buffer.from(lines.join('\n')));
}
const routes = routeBodies(bodies);
const defaults: IngestDefaults = { datasetId: 'ds_bench', defaultSeverity: 1, now: Date.now(), overflowFrom: undefined };

// BENCH_ENCODE=1: each case's events also written as the log record the append writes (encodeBatch), the rest of the event loop's work per event.
const encode = process.env.BENCH_ENCODE === '1';
const tenant = { orgId: '01KBENCHORG00000000000000', projectId: '01KBENCHPROJECT0000000000', mode: 'live' } as const;
const stored = (events: NewEvent[]): number => (encode ? encodeBatch(tenant, defaults.now, events).length && events.length : events.length);

/** Inserter.insertItems's synchronous part for one dataset. */
function normaliseShipped(items: IngestItem[]): NewEvent[] {
  const events = normaliseMapped(items, defaults).events;
  if (encode) encodeBatch(tenant, defaults.now, events);
  return events;
}

const cases: Array<{ name: string; bodies: Buffer[]; run: (body: Buffer) => number }> = [
  { name: 'native NDJSON', bodies: routes.native, run: (body) => stored(parseNdjson(body, defaults).events) },
  // The control: native NDJSON of the events as the Loki routes store them (the labels' own cost).
  { name: "native, Loki's labels", bodies: routes.storedShape, run: (body) => stored(parseNdjson(body, defaults).events) },
  { name: 'Loki JSON', bodies: routes.loki, run: (body) => normaliseShipped(toShippedEvents(decodeJsonPush(body))).length },
  { name: 'Loki protobuf', bodies: routes.lokiProtobuf, run: (body) => normaliseShipped(toShippedEvents(decodeProtobufPush(body))).length },
  {
    name: 'Elasticsearch bulk',
    bodies: routes.bulk,
    run: (body) => {
      const items = parseBulk(body, 'bench-es');
      const shipped: IngestItem[] = [];
      for (const item of items) if (item.document) shipped.push(toShippedEvent(item.index, item.id, item.document, item.bytes));
      const stored = normaliseShipped(shipped);
      return bulkAnswer(items, stored.map((e) => e.eventId), 1).length > 0 ? stored.length : 0;
    },
  },
];

// BENCH_CASES=loki (any of native, stored, loki, loki-proto, bulk: native is always run) runs some, for a profile of one.
const picked = (process.env.BENCH_CASES ?? 'native,stored,loki,loki-proto,bulk').split(',');
const keys = ['native', 'stored', 'loki', 'loki-proto', 'bulk'];
cases.splice(0, cases.length, ...cases.filter((_, i) => i === 0 || picked.includes(keys[i]!)));
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const ms = Number(process.env.BENCH_MS ?? 1_500);
const results = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let r = 0; r <= rounds; r++) {
  for (const c of cases) {
    let events = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; performance.now() - started < ms; i++) events += c.run(c.bodies[i % c.bodies.length]!);
    const used = process.cpuUsage(cpu);
    if (r > 0) results.get(c.name)!.push((used.user + used.system) / events);
  }
}
const native = median(results.get('native NDJSON')!);
console.log(`parsing and mapping, one core, µs CPU/event (median of ${rounds} alternating rounds of ${ms} ms, after a warm-up round)`);
for (const [name, values] of results) {
  const m = median(values);
  console.log(`  ${name.padEnd(24)} ${fmt(m, 2).padStart(6)} µs${name === 'native NDJSON' ? '' : `  = native × ${fmt(m / native, 2)}`}   (rounds ${values.map((v) => fmt(v, 2)).join(', ')})`);
}
