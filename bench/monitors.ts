// npm run bench:monitors — the goals for monitors, each beside a same-run peer.
//
// Part 1, match monitors (BENCH_PARTS=match): 100 match monitors on one project while NDJSON is
// ingested as fast as the server takes it (1,000 realistic events a request: RFC 3339 ts, every
// canonical field, a 4-key payload; BENCH_CLIENTS back-to-back clients). Rounds alternate
// between that project and a second project of the same organisation without monitors (same
// server, same load), so "ingest with monitors ÷ without" is a same-run ratio (goal ≥ 90%).
// Beside the bulk clients, a probe client sends every BENCH_PROBE_MS one more 1,000-event request
// whose first event matches exactly one monitor (round robin, so each monitor's 5 s group window
// is closed again by its next probe and the match is notified at once); a real webhook receiver
// on loopback, in a process of its own, timestamps each arrival: notification latency = arrival
// − the probe request's acknowledgement (goal p99 < 2 s). 10 of the 100 monitors also match
// ~0.3% of the bulk traffic (grouped notifications every 10 s: load on the outbox).
//
// Part 2, threshold monitors (BENCH_PARTS=threshold): BENCH_EVENTS (default 10,000,000) events
// generated straight into the store (bench:query's distribution spread over the 24 h up to now;
// 90% the bench tenant's), the same rate (BENCH_EVENTS / 86,400 a second, realistic events with
// RFC 3339 ts) kept arriving over HTTP so that every window holds its share, and a paced API load (GET /v1/media?limit=10 and a POST /v1/query page, BENCH_API_RPS together).
// Then 1,000 threshold monitors, every = 1m, windows 1m–24h, ten query shapes (19 distinct
// statements; BENCH_DISTINCT=1: 1,000, each monitor's filter its own). Phases alternate in one
// run, each BENCH_CYCLES minutes (2) long: off (no monitor due: before creating them, and later
// with next_eval_at moved out of reach in the metadata store), the minute after the creation
// (every monitor due at once: reported on its own, in no ratio), then on (each monitor due at its
// slot, as the evaluator leaves it) after each off phase: off, created, off, on, off, on, off, on
// (BENCH_THRESHOLD_ROUNDS on phases, 3).
// Printed per phase and summed: evaluations per minute, how late each finished after its due time
// and how many missed their minute (goal: none), the server's CPU per evaluation and ClickHouse's
// (on − off), and each endpoint's API p99: the median of the on phases' p99 over the median of the
// off phases' (goal 0.90–1.10×), with each on phase over the off phase before it.
// BENCH_NEIGHBOUR=1 adds the same run's control after the on phases: as many rounds of an off
// phase and a neighbour phase, in which no monitor is due and another process takes the cores the
// monitors took (on − off): what the API's p99 loses to sharing the cores at all.
// On ClickHouse too, when bench/clickhouse-support.ts finds it (one line says why when skipped).
//
// The server runs as `opsctl serve` from the compiled build (npm run bench:monitors builds
// first), with OPS_OUTBOUND_ALLOW_PRIVATE=true so channels may point at the loopback receiver.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { png } from '../src/test-support/media/test-files.js';
import { tenantKey } from '../src/tenancy/tenant.js';
import { eventStoreSettings } from '../src/engine/duckdb/duckdb-tables.js';
import { cpuSince, fmt, freePort, groupCpuMicros, groupThreadCpuMicros, killOnExit, median, startOpsctl, tempDir, type Started } from './support.js';
import { nextDueMs, slotKey } from '../src/monitors/schedule.js';
import { durationMs } from '../src/monitors/durations.js';
import { benchDatabaseUrl, ClickHouseHosts, clickHouseServerPids, cpuSecondsOf, dropClickHouseDatabase, findClickHouse, generateEvents } from './clickhouse-support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]! : NaN);
const load = () => os.loadavg().map((l) => fmt(l, 1)).join(' / ');

// ---------------------------------------------------------------------------------------------
// The webhook receiver, a process of its own (argv: receiver): the bench's event loop is busy
// sending the load, and an arrival must be timestamped when it arrives. Each request is told to
// the parent over IPC with its arrival time (Date.now(), the clock both processes share).
function receiverProcess(): void {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(200).end();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { monitor?: { id?: string }; status?: string; events_total?: number; events?: Array<{ payload?: { probe?: string } }> };
        process.send!({ at, monitor: body.monitor?.id, status: body.status, total: body.events_total ?? 0, probes: (body.events ?? []).flatMap((e) => (e.payload?.probe ? [e.payload.probe] : [])) });
      } catch {
        process.send!({ at, monitor: undefined, status: 'unparsable', total: 0, probes: [] });
      }
    });
  });
  server.keepAliveTimeout = 72_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on('disconnect', () => process.exit(0));
}

interface Arrival {
  at: number;
  monitor: string | undefined;
  status: string;
  total: number;
  probes: string[];
}

async function startReceiverProcess(): Promise<{ url: string; arrivals: Arrival[]; child: ChildProcess }> {
  const child = killOnExit(spawn(process.execPath, ['--import', 'tsx', 'bench/monitors.ts', 'receiver'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const arrivals: Arrival[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', () => reject(new Error('the receiver exited')));
    child.on('message', (m: { port?: number } & Partial<Arrival>) => {
      if (m.port !== undefined) resolve(m.port);
      else arrivals.push(m as Arrival);
    });
  });
  return { url: `http://127.0.0.1:${port}/hook`, arrivals, child };
}

// ---------------------------------------------------------------------------------------------
// HTTP: a keep-alive node:http client (fetch's per-response work would be the bench's noise).
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function request(base: string, token: string, method: string, pathname: string, body?: string | Buffer, contentType = 'application/json'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
    if (body !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request(`${base}${pathname}`, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
async function json<T>(base: string, token: string, method: string, pathname: string, body?: unknown): Promise<T> {
  const r = await request(base, token, method, pathname, body === undefined ? undefined : JSON.stringify(body));
  if (r.status >= 300) throw new Error(`${method} ${pathname}: ${r.status} ${r.text}`);
  return (r.text ? JSON.parse(r.text) : {}) as T;
}

/** An organisation on the enterprise plan (1,000 monitors) with `projects` projects, an all-scopes token each. */
async function prepare(prefix: string, projects: number): Promise<{ dataDir: string; tokens: string[]; tenants: Array<{ orgId: string; projectId: string; mode: 'live' }> }> {
  const dataDir = tempDir(prefix);
  const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
  const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'enterprise', ownerEmail: 'bench@example.com' });
  const ids = [org.project_id];
  for (let p = 1; p < projects; p++) ids.push((await ctx.orgs.createProject(org.org_id, `project-${p}`)).project_id);
  const tokens: string[] = [];
  const tenants = ids.map((projectId) => ({ orgId: org.org_id, projectId, mode: 'live' as const }));
  for (const tenant of tenants) tokens.push((await ctx.tokens.create({ tenant, name: 'bench', scopes: parseScopes('all'), expiresAt: null })).token);
  await ctx.close();
  return { dataDir, tokens, tenants };
}

const serverEnv = (dataDir: string, port: number, cdnPort: number): Record<string, string> => ({
  OPS_DATA_DIR: dataDir,
  OPS_PORT: String(port),
  OPS_CDN_PORT: String(cdnPort),
  OPS_OUTBOUND_ALLOW_PRIVATE: 'true',
  OPS_RATE_LIMIT_PER_SECOND: '1000000',
  OPS_RATE_LIMIT_BURST: '1000000',
});
async function serve(dataDir: string, extra: Record<string, string> = {}): Promise<{ started: Started; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = await startOpsctl({ args: ['serve'], env: { ...serverEnv(dataDir, port, await freePort()), ...extra }, ready: `${base}/healthz` });
  return { started, base };
}
const groupCpu = (started: Started) => [...groupCpuMicros(started.pgid).values()].reduce((a, b) => a + b, 0);

// ---------------------------------------------------------------------------------------------
// Realistic events (bench/ingest.ts's realistic shape, plus a message: every canonical field).
const gameEvents = ['player_join', 'player_leave', 'match_start', 'round_end', 'kill', 'purchase', 'chat_message'];
const gameMaps = ['dust2', 'inferno', 'mirage', 'nuke', 'overpass', 'vertigo', 'ancient'];
const regions = ['eu-west-1', 'us-east-2', 'ap-south-1', 'sa-east-1'];
function realisticEvent(n: number, ts: number): Record<string, unknown> {
  const event = gameEvents[n % gameEvents.length]!;
  const map = gameMaps[n % gameMaps.length]!;
  const actor = `player-${(n * 7919) % 50000}`;
  return {
    ts: new Date(ts).toISOString(),
    severity: n % 10 === 0 ? 'warn' : 'info',
    event,
    actor,
    source: `game-server/${regions[n % regions.length]}/node-${n % 16}`,
    message: `${actor} ${event} on ${map}`,
    payload: { map, ping: (n * 13) % 250, player_id: `p_${String((n * 7919) % 50000).padStart(10, '0')}`, round: n % 30 },
  };
}
const perRequest = 1_000;
/** 32 bodies of 1,000 events, ts spread over the last minute (re-sent as they are: ts need not be unique). */
function bulkBodies(): string[] {
  const bodies: string[] = [];
  const now = Date.now();
  for (let b = 0; b < 32; b++) {
    const lines: string[] = [];
    for (let i = 0; i < perRequest; i++) lines.push(JSON.stringify(realisticEvent(b * perRequest + i, now - 60_000 + i * 37 + b)));
    bodies.push(lines.join('\n'));
  }
  return bodies;
}

// ---------------------------------------------------------------------------------------------
// Part 1: match monitors.
//
// 90 monitors of 9 shapes whose first conditions pass for part of the bulk traffic (so the
// predicate does real work on every event) and whose last, on `payload.rule` (`rule`), only the
// probe for monitor K meets; 10 "busy" monitors match ~0.3% of the bulk traffic.
/** Monitor K's own condition: `==` for even K (the matcher looks these up by value: match-guard.ts), `:` (contains) for odd K, which every event is tested against. */
const rule = (k: number) => (k % 2 === 0 ? `payload.rule == "r${k}."` : `payload.rule:"r${k}."`);
const matchShapes: Array<{ q: (k: number) => string; probe: Record<string, unknown> }> = [
  { q: (k) => `severity >= error AND source:game-server/eu-west-1* AND ${rule(k)}`, probe: { severity: 'error', source: 'game-server/eu-west-1/node-3' } },
  { q: (k) => `event:anticheat.flag AND payload.score > 0.9 AND ${rule(k)}`, probe: { event: 'anticheat.flag' } },
  { q: (k) => `payload.ping > 200 AND payload.map:dust2 AND ${rule(k)}`, probe: { map: 'dust2', ping: 240 } },
  { q: (k) => `actor:player-1* AND "aimbot" AND ${rule(k)}`, probe: { actor: 'player-1234' } },
  { q: (k) => `(event:kill OR event:anticheat.flag) AND severity >= warn AND ${rule(k)}`, probe: { event: 'anticheat.flag', severity: 'error' } },
  { q: (k) => `dataset:game AND payload.round >= 25 AND NOT actor:bot-* AND ${rule(k)}`, probe: { round: 29 } },
  { q: (k) => `source:*node-1* AND payload.player_id:p_00000* AND ${rule(k)}`, probe: { source: 'game-server/us-east-2/node-12', player_id: 'p_0000004242' } },
  { q: (k) => `event in (purchase, chat_message, anticheat.flag) AND payload.ping < 100 AND ${rule(k)}`, probe: { event: 'anticheat.flag', ping: 42 } },
  { q: (k) => `"on nuke" AND payload.rule exists AND ${rule(k)}`, probe: { message: 'player-7 aimbot on nuke', map: 'nuke' } },
];
const busyQuery = (k: number) => `severity >= warn AND payload.ping >= 200 AND source:*node-${(2 * k) % 16}`;

function probeEvent(k: number, probeId: string, ts: number): Record<string, unknown> {
  const shape = matchShapes[k % matchShapes.length]!.probe;
  const base = realisticEvent(k, ts) as { payload: Record<string, unknown> } & Record<string, unknown>;
  const { map, ping, round, player_id, ...fields } = shape as Record<string, unknown>;
  return {
    ...base,
    severity: 'error',
    event: 'anticheat.flag',
    message: 'player-7 aimbot on nuke',
    ...fields,
    payload: { ...base.payload, ...(map ? { map } : {}), ...(ping !== undefined ? { ping } : {}), ...(round !== undefined ? { round } : { round: 29 }), ...(player_id ? { player_id } : {}), score: 0.97, rule: `r${k}.`, probe: probeId },
  };
}

async function matchPart(): Promise<void> {
  const monitorsCount = 100;
  const busy = 10;
  const seconds = Number(process.env.BENCH_SECONDS ?? 15);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const clients = Number(process.env.BENCH_CLIENTS ?? 4);
  const probeMs = Number(process.env.BENCH_PROBE_MS ?? 150);
  const { dataDir, tokens } = await prepare('bench-monitors-match-', 2);
  const [withToken, withoutToken] = tokens as [string, string];
  const receiver = await startReceiverProcess();
  const { started: server, base } = await serve(dataDir);
  console.log(`match monitors — ${monitorsCount} on one project (${busy} of them matching ~0.3% of the bulk traffic), ${clients} bulk clients × ${fmt(perRequest)} realistic events a request, probe every ${probeMs} ms; ${rounds} rounds × 2 × ${seconds} s; load average ${load()}`);
  try {
    const channel = await json<{ id: string }>(base, withToken, 'POST', '/v1/channels', { name: 'bench receiver', kind: 'webhook', url: receiver.url });
    const ids: string[] = [];
    for (let k = 0; k < monitorsCount; k++) {
      const isBusy = k >= monitorsCount - busy;
      const q = isBusy ? busyQuery(k) : matchShapes[k % matchShapes.length]!.q(k);
      const m = await json<{ id: string }>(base, withToken, 'POST', '/v1/monitors', { name: `match ${k}`, kind: 'match', q, channel_ids: [channel.id], group_window: isBusy ? '10s' : '5s' });
      ids.push(m.id);
    }
    const probeable = monitorsCount - busy;
    const bodies = bulkBodies();
    const post = async (token: string, body: string) => {
      const r = await request(base, token, 'POST', '/v1/datasets/game/ingest', body, 'application/x-ndjson');
      if (r.status !== 200) throw new Error(`ingest: ${r.status} ${r.text}`);
    };
    // Warm-up: both projects' dataset, the match cache, the JIT.
    for (const token of [withToken, withoutToken]) for (let i = 0; i < 20; i++) await post(token, bodies[i % bodies.length]!);

    const acks = new Map<string, { ackAt: number; k: number }>();
    let probeSeq = 0;
    async function round(token: string, withMonitors: boolean) {
      let events = 0;
      let stop = false;
      const cpuBefore = groupCpu(server);
      const started = performance.now();
      const deadline = started + seconds * 1000;
      const bulk = Array.from({ length: clients }, async (_, c) => {
        let i = c;
        while (performance.now() < deadline) {
          await post(token, bodies[i++ % bodies.length]!);
          events += perRequest;
        }
      });
      const probes = (async () => {
        let k = probeSeq % probeable;
        const inFlight: Promise<void>[] = [];
        for (let n = 0; !stop && performance.now() < deadline; n++) {
          const probeId = `probe-${probeSeq++}`;
          const lines = bodies[n % bodies.length]!.split('\n');
          lines[0] = JSON.stringify(probeEvent(k, probeId, Date.now()));
          const body = lines.join('\n');
          const kk = k;
          inFlight.push(
            post(token, body).then(() => {
              events += perRequest;
              if (withMonitors) acks.set(probeId, { ackAt: Date.now(), k: kk });
            }),
          );
          k = (k + 1) % probeable;
          await sleep(probeMs);
        }
        await Promise.all(inFlight);
      })();
      await Promise.all(bulk);
      stop = true;
      await probes;
      const elapsed = (performance.now() - started) / 1000;
      return { rate: events / elapsed, cores: (groupCpu(server) - cpuBefore) / 1e6 / elapsed };
    }

    const withRates: number[] = [];
    const withoutRates: number[] = [];
    // Server CPU per event (µs): the rate's inverse per core, steadier than the rate when others' work takes cores.
    const withCpu: number[] = [];
    const withoutCpu: number[] = [];
    const arrivalsBefore = receiver.arrivals.length;
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [true, false] : [false, true];
      const line: string[] = [];
      for (const withMonitors of order) {
        const result = await round(withMonitors ? withToken : withoutToken, withMonitors);
        (withMonitors ? withRates : withoutRates).push(result.rate);
        (withMonitors ? withCpu : withoutCpu).push((1e6 * result.cores) / result.rate);
        line.push(`${withMonitors ? 'with' : 'without'} ${fmt(result.rate)} events/s (server ${fmt(result.cores, 2)} cores)`);
        await sleep(2_000); // the last probes' notifications, before the next round's load
      }
      console.log(`  round ${r + 1}: ${line.join(', ')}; ratio ${fmt((100 * withRates.at(-1)!) / withoutRates.at(-1)!, 1)}%; load average ${load()}`);
    }
    await sleep(8_000);
    const arrivals = receiver.arrivals.slice(arrivalsBefore);
    const latencies: number[] = [];
    const seen = new Set<string>();
    let immediate = 0;
    let grouped = 0;
    let busyNotifications = 0;
    const busyIds = new Set(ids.slice(probeable));
    for (const a of arrivals) {
      if (a.monitor && busyIds.has(a.monitor)) {
        busyNotifications++;
        continue;
      }
      if (a.total === 1) immediate++;
      else grouped++;
      for (const p of a.probes) {
        const ack = acks.get(p);
        if (!ack || seen.has(p)) continue;
        seen.add(p);
        if (a.monitor !== ids[ack.k]) throw new Error(`probe ${p} for monitor ${ack.k} arrived from ${a.monitor}`);
        latencies.push(a.at - ack.ackAt);
      }
    }
    latencies.sort((a, b) => a - b);
    const missing = acks.size - seen.size;
    const wr = median(withRates);
    const wo = median(withoutRates);
    console.log(`  ingest with ${monitorsCount} match monitors   ${fmt(wr)} events/s (median of ${rounds}; goal stated: 50,000)`);
    console.log(`  ingest without monitors        ${fmt(wo)} events/s (median of ${rounds}, same server, alternating rounds)`);
    console.log(`  with ÷ without                 ${fmt((100 * wr) / wo, 1)}% (goal ≥ 90%; per round ${withRates.map((w, i) => `${fmt((100 * w) / withoutRates[i]!, 1)}%`).join(', ')})`);
    const wc = median(withCpu);
    const woc = median(withoutCpu);
    console.log(`  server CPU per event           with ${fmt(wc, 2)} µs, without ${fmt(woc, 2)} µs (medians): without ÷ with ${fmt((100 * woc) / wc, 1)}% — the ratio of rates the same cores would give`);
    console.log(
      `  notification latency           ack → arrival at the receiver: p50 ${fmt(quantile(latencies, 0.5))} ms, p99 ${fmt(quantile(latencies, 0.99))} ms, max ${fmt(latencies.at(-1) ?? NaN)} ms ` +
        `(goal p99 < 2,000; ${latencies.length} probes notified, ${missing} not within 8 s of the last round)`,
    );
    console.log(`  notifications received         ${arrivals.length}: ${immediate} immediate and ${grouped} grouped of the probe monitors, ${busyNotifications} of the busy ones`);
    console.log(
      `  goals: p99 < 2 s ${quantile(latencies, 0.99) < 2000 && missing === 0 ? 'met' : 'not met'}; with ≥ 90% of without ${wr >= 0.9 * wo ? 'met' : 'not met'}; 50,000 events/s ${wr >= 50_000 ? 'met' : 'not met'}`,
    );
  } finally {
    await server.stop();
    receiver.child.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Part 2: threshold monitors.

/** 1,000 monitors: ten shapes over bench:query's vocabulary (evt.N, srv-N, payload map/ping/round), windows 1m–24h. */
function thresholdMonitor(k: number, channelId: string, distinct = false): Record<string, unknown> {
  const shapes: Array<{ q: string; window: string; condition: { op: string; value: number } }> = [
    { q: 'severity >= error stats count() by source', window: '5m', condition: { op: '>', value: 5_000 } },
    // Ten of the thousand fire (one group each): the notification path runs too.
    { q: `event == "evt.${k % 50}" stats count()`, window: '5m', condition: { op: '>', value: k % 100 === 1 ? 0 : 1_000_000 } },
    { q: 'stats p95(payload.ping) by source', window: '15m', condition: { op: '>', value: 399 } },
    { q: 'payload.map:dust AND severity >= warn stats count() by source', window: '15m', condition: { op: '>', value: 100_000 } },
    { q: 'stats avg(payload.ping)', window: '1h', condition: { op: '>', value: 300 } },
    { q: `source:srv-${k % 20} stats count() by event`, window: '1h', condition: { op: '>', value: 100_000 } },
    { q: 'severity >= warn stats count() by payload.map', window: '5m', condition: { op: '<', value: 0 } },
    { q: `event == "evt.${k % 50}" AND payload.ping > 300 stats count()`, window: '1m', condition: { op: '>', value: 50 } },
    { q: 'stats max(payload.round) by source', window: '5m', condition: { op: '>', value: 30 } },
    { q: 'severity >= error stats count() by source', window: '24h', condition: { op: '>', value: 1e9 } },
  ];
  const s = shapes[k % shapes.length]!;
  // Distinct: the shape's filter and a condition no event fails (no source is named so), different
  // for each monitor — as 1,000 monitors of many tenants or of one tenant's many filters are
  // 1,000 statements, where the shapes alone are 19 and share their reads (evaluator.ts).
  const q = distinct ? (s.q.startsWith('stats ') ? `source != "none-${k}" ${s.q}` : s.q.replace(' stats ', ` AND source != "none-${k}" stats `)) : s.q;
  return { name: `threshold ${k}`, kind: 'threshold', q, window: s.window, every: '1m', condition: s.condition, channel_ids: [channelId] };
}

/** A trickle event in bench:query's vocabulary (so the short windows hold data), RFC 3339 ts and every canonical field. */
function trickleEvent(n: number): Record<string, unknown> {
  const maps = ['dust', 'nuke', 'inferno', 'mirage', 'vertigo'];
  return {
    ts: new Date(Date.now() - (n % 500)).toISOString(),
    severity: ['debug', 'info', 'warn', 'error', 'fatal'][(n * 2654435761) % 5]!,
    event: `evt.${n % 50}`,
    actor: `player-${n % 10000}`,
    source: `srv-${n % 20}`,
    message: `message number ${n}`,
    payload: { map: maps[n % 5], ping: (n * 7919) % 400, round: n % 30, player_id: `p_${String(n % 50000).padStart(10, '0')}` },
  };
}

/** Generates events straight into the DuckDB file (bench:query's distribution over the 24 h before `end`), 90% the tenant's. */
async function generateDuckDb(dataDir: string, orgId: string, datasetIds: string[], count: number, end: number): Promise<void> {
  const dir = path.join(dataDir, 'events');
  const instance = await DuckDBInstance.create(path.join(dir, 'events.duckdb'), eventStoreSettings(path.join(dir, 'tmp')));
  const c = await instance.connect();
  const tenantId = Number((await c.runAndReadAll('SELECT id FROM event_tenants WHERE org_id = ?', [orgId])).getRows()[0]![0]);
  const otherId = 1000;
  await c.run(`INSERT INTO event_tenants SELECT ${otherId}, 'other-org', 'other-project', 'live' WHERE NOT EXISTS (SELECT 1 FROM event_tenants WHERE id = ${otherId})`);
  const spacing = 86_400_000 / count;
  const base = end - 86_400_000;
  for (let from = 0; from < count; from += 1_000_000) {
    const to = Math.min(count, from + 1_000_000);
    await c.run(
      `INSERT INTO events SELECT
         0, CASE WHEN i % 10 = 9 THEN ${otherId} ELSE ${tenantId} END,
         CASE i % 3 WHEN 0 THEN ? WHEN 1 THEN ? ELSE ? END,
         uuid(), ${base} + floor(i * ${spacing})::BIGINT, ${base} + floor(i * ${spacing})::BIGINT + 5,
         (hash(i) % 5)::UTINYINT, 'evt.' || (i % 50),
         CASE WHEN i % 7 = 0 THEN NULL ELSE 'player-' || (i % 10000) END,
         'srv-' || (i % 20), 'message number ' || i,
         json_object('map', ['dust', 'nuke', 'inferno', 'mirage', 'vertigo'][(i % 5) + 1], 'ping', (i * 7919) % 400, 'round', i % 30, 'player_id', 'p_' || lpad(((i * 7919) % 50000)::VARCHAR, 10, '0'))::VARCHAR,
         200
       FROM range(${from}, ${to}) t(i)`,
      [datasetIds[0]!, datasetIds[1]!, datasetIds[2]!],
    );
  }
  await c.run('CHECKPOINT');
  c.closeSync();
  instance.closeSync();
}

interface Phase {
  /**
   * off: no monitor due; on: each monitor at its slot; created: the minute after the creation made
   * all of them due at once; neighbour: no monitor due, another process taking the cores the
   * monitors took (BENCH_NEIGHBOUR=1).
   */
  kind: 'off' | 'on' | 'created' | 'neighbour';
  seconds: number;
  cores: number;
  extraCores: number;
  /** Cores by thread kind (groupThreadCpuMicros): the event loop, the events worker with DuckDB's threads, the rest. */
  threads: { main: number; events: number; other: number };
  latencies: { media: number[]; query: number[] };
  p99: { media: number; query: number };
  evaluations: number;
  /** Due times not evaluated within a minute of them (finished later, or seen still waiting or evaluating a minute after). */
  missed: number;
  /** The 1-minute load average at the phase's end. */
  load: number;
}

/**
 * Processes that take `cores` of CPU between them (each busy a share of every 10 ms and asleep
 * the rest), as a neighbour on the machine would: the control of the API's p99 against the cores
 * the monitors take.
 */
function startNeighbour(cores: number): { pids: number[]; stop: () => void } {
  const count = Math.ceil(cores);
  const code = `const share = Number(process.argv[1]); const tick = () => { const end = performance.now() + share * 10; while (performance.now() < end); setTimeout(tick, (1 - share) * 10); }; tick();`;
  const children = Array.from({ length: count }, () => spawn(process.execPath, ['-e', code, String(cores / count)], { stdio: 'ignore' }));
  for (const child of children) killOnExit(child);
  return { pids: children.map((c) => c.pid!), stop: () => children.forEach((c) => c.kill()) };
}

async function thresholdPart(engine: 'duckdb' | 'clickhouse'): Promise<void> {
  const events = Number(process.env.BENCH_EVENTS ?? 10_000_000);
  /** Minutes of each on phase; the off phases last as long by default, so both sides of the ratio hold as many requests. */
  const cycles = Number(process.env.BENCH_CYCLES ?? 2);
  const offSeconds = Number(process.env.BENCH_OFF_SECONDS ?? cycles * 60);
  /** On phases (each after an off phase): off, on, off, on, off, on. */
  const rounds = Number(process.env.BENCH_THRESHOLD_ROUNDS ?? 3);
  /** Each monitor its own statement (BENCH_DISTINCT=1) instead of the ten shapes' 19. */
  const distinct = process.env.BENCH_DISTINCT === '1';
  const apiRps = Number(process.env.BENCH_API_RPS ?? 10);
  const monitorsCount = Number(process.env.BENCH_THRESHOLD_MONITORS ?? 1000);
  let chUrl: string | undefined;
  let hosts: ClickHouseHosts | undefined;
  if (engine === 'clickhouse') {
    const found = await findClickHouse();
    if ('skipped' in found) {
      console.log(`\nthreshold monitors on ClickHouse skipped: ${found.skipped}`);
      return;
    }
    chUrl = benchDatabaseUrl(found.base, 'monitors');
    hosts = new ClickHouseHosts(chUrl);
  }
  const engineEnv: Record<string, string> = chUrl ? { OPS_EVENTS_URL: chUrl } : {};
  const { dataDir, tokens, tenants } = await prepare(`bench-monitors-threshold-${engine}-`, 1);
  const token = tokens[0]!;
  const tenant = tenants[0]!;
  const receiver = await startReceiverProcess();
  let server: Started | undefined;
  try {
    // Datasets (one seed event each) and 10 media files through the API; then the history, generated.
    let s = await serve(dataDir, engineEnv);
    server = s.started;
    for (const name of ['game', 'auth', 'matchmaking']) await json(s.base, token, 'POST', `/v1/datasets/${name}/ingest`, [{ event: 'seed', ts: Date.now() - 6 * 86_400_000 }]);
    for (let i = 0; i < 10; i++) {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(png())], { type: 'image/png' }), `screenshot-${i}.png`);
      const r = await fetch(`${s.base}/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
      if (r.status !== 201) throw new Error(`upload: ${r.status} ${await r.text()}`);
    }
    // Their ids (the API shows names only), from the metadata store.
    const metaRead = new SQLite(path.join(dataDir, 'metadata.sqlite'), { readonly: true });
    const idOf = metaRead.prepare('SELECT id FROM datasets WHERE org_id = ? AND project_id = ? AND name = ?');
    const datasetIds = ['game', 'auth', 'matchmaking'].map((n) => (idOf.get(tenant.orgId, tenant.projectId, n) as { id: string }).id);
    metaRead.close();
    const t0 = performance.now();
    if (engine === 'duckdb') {
      await server.stop();
      server = undefined;
      await generateDuckDb(dataDir, tenant.orgId, datasetIds, events, Date.now());
      s = await serve(dataDir, engineEnv);
      server = s.started;
    } else {
      await generateEvents(hosts!, { from: 0, to: events, tenantKey: tenantKey(tenant), otherKey: 'other-org/other-project/live', datasetIds, base: Date.now() - 86_400_000, spacingMs: 86_400_000 / events, playerIds: true });
      await hosts!.waitForMerges();
    }
    const base = s.base;
    const started = server;
    /** Events per second that keep arriving: the history's rate, so every window holds its share. */
    const trickleRate = Math.max(10, Math.round(events / 86_400));
    console.log(
      `\nthreshold monitors on ${engine === 'duckdb' ? 'DuckDB' : 'ClickHouse'} — ${fmt(monitorsCount)} monitors, every 1m, over ${fmt(events)} generated events ` +
        `(BENCH_EVENTS; the 24 h up to now, 90% the bench tenant's; generated in ${fmt((performance.now() - t0) / 1000, 1)} s), ` +
        `the same rate (${fmt(trickleRate)} events/s) ingested over HTTP, API load ${apiRps} req/s; load average ${load()}`,
    );

    // The background load of both phases: the trickle, and the API requests whose latency is measured.
    let running = true;
    let trickleN = 0;
    const trickle = (async () => {
      while (running) {
        const t = performance.now();
        const body = Array.from({ length: trickleRate }, () => JSON.stringify(trickleEvent(trickleN++))).join('\n');
        const r = await request(base, token, 'POST', '/v1/datasets/game/ingest', body, 'application/x-ndjson');
        if (r.status !== 200) throw new Error(`trickle: ${r.status} ${r.text}`);
        await sleep(Math.max(0, 1000 - (performance.now() - t)));
      }
    })();
    let sink: { media: number[]; query: number[] } = { media: [], query: [] };
    const api = (async () => {
      const interval = 1000 / apiRps;
      const inFlight = new Set<Promise<void>>();
      for (let n = 0; running; n++) {
        const isMedia = n % 2 === 0;
        const target = sink;
        const t = performance.now();
        const p = (isMedia ? request(base, token, 'GET', '/v1/media?limit=10') : request(base, token, 'POST', '/v1/query', JSON.stringify({ q: `severity >= error AND source:srv-${n % 20}` }))).then((r) => {
          if (r.status !== 200) throw new Error(`api: ${r.status} ${r.text}`);
          (isMedia ? target.media : target.query).push(performance.now() - t);
        });
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        await sleep(interval);
      }
      await Promise.all(inFlight);
    })();

    // The metadata store, read (and between phases written) beside the server.
    const meta = new SQLite(path.join(dataDir, 'metadata.sqlite'));
    meta.pragma('busy_timeout = 10000');
    const readSchedule = meta.prepare(`SELECT id, next_eval_at, lease_owner FROM monitors WHERE kind = 'threshold'`);
    const lastDue = new Map<string, string>();
    /** Each observed evaluation: when it was seen (ms since the phase began) and how late it finished after its due time (ms; observed at the poll, ±1 s). */
    let seen: Array<{ at: number; late: number }> = [];
    /** Due times (monitor id and due) not evaluated within a minute: seen still waiting or evaluating a minute after, or finished later. Each counted once. */
    let missedDue = new Set<string>();
    let maxOverdue = 0;
    let phaseStart = 0;
    /** The most evaluations seen finished between two polls (~1 s): the burst an API request can meet. */
    let burst = 0;
    const poll = () => {
      const now = Date.now();
      const before = seen.length;
      for (const row of readSchedule.all() as Array<{ id: string; next_eval_at: string | null; lease_owner: string | null }>) {
        if (!row.next_eval_at) continue;
        const previousText = lastDue.get(row.id);
        const due = Date.parse(row.next_eval_at);
        if (previousText !== undefined && previousText !== row.next_eval_at && due < 8e15) {
          const previous = Date.parse(previousText);
          if (previous < 8e15) {
            seen.push({ at: now - phaseStart, late: now - previous });
            if (now - previous >= 60_000) missedDue.add(`${row.id}|${previousText}`);
          }
        }
        lastDue.set(row.id, row.next_eval_at);
        if (due < 8e15 && row.lease_owner === null) maxOverdue = Math.max(maxOverdue, now - due);
        // Claimed or not: a due time a minute past, not yet moved on, is a minute missed.
        if (due < 8e15 && now - due >= 60_000) missedDue.add(`${row.id}|${row.next_eval_at}`);
      }
      burst = Math.max(burst, seen.length - before);
    };
    const monitorsOf = meta.prepare(`SELECT id, org_id, project_id, mode, q, window, every FROM monitors WHERE kind = 'threshold'`);
    const setDue = meta.prepare(`UPDATE monitors SET next_eval_at = ? WHERE id = ?`);
    /** Every monitor due at its own slot (schedule.ts), as an evaluator leaves it: the steady state, not the burst of a creation. */
    const resume = () => {
      const now = Date.now();
      meta.transaction(() => {
        for (const m of monitorsOf.all() as Array<{ id: string; org_id: string; project_id: string; mode: string; q: string; window: string | null; every: string | null }>) {
          setDue.run(new Date(nextDueMs(slotKey(m), durationMs(m.every ?? '1m') ?? 60_000, now)).toISOString(), m.id);
        }
      })();
      poll();
    };
    /** No monitor due until resumed; waits for the evaluations in progress to end. */
    const pause = async () => {
      meta.prepare(`UPDATE monitors SET next_eval_at = '9999-01-01T00:00:00.000Z' WHERE kind = 'threshold'`).run();
      while ((meta.prepare(`SELECT count(*) AS n FROM monitors WHERE lease_owner IS NOT NULL`).get() as { n: number }).n > 0) await sleep(200);
      poll();
    };

    const chPids = engine === 'clickhouse' ? clickHouseServerPids() : [];
    const phases: Phase[] = [];
    let neighbourCores = 0;
    const neighbourTaken: number[] = [];
    const p99 = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.99);
    async function phase(kind: Phase['kind'], secondsLong: number) {
      sink = { media: [], query: [] };
      seen = [];
      missedDue = new Set();
      maxOverdue = 0;
      burst = 0;
      const polling = kind === 'on' || kind === 'created';
      const cpuBefore = groupCpuMicros(started.pgid);
      const threadsBefore = groupThreadCpuMicros(started.pgid);
      const extraBefore = cpuSecondsOf(chPids);
      const t = performance.now();
      phaseStart = Date.now();
      while (performance.now() - t < secondsLong * 1000) {
        if (polling) poll();
        await sleep(1000);
      }
      if (polling) poll();
      const elapsed = (performance.now() - t) / 1000;
      const cpu = [...cpuSince(cpuBefore, groupCpuMicros(started.pgid)).values()].reduce((a, b) => a + b, 0) / 1e6;
      // The phase's requests only: those of the pauses between phases (the wait for evaluations in flight) go to no phase.
      const latencies = { media: [...sink.media], query: [...sink.query] };
      sink = { media: [], query: [] };
      const threadsAfter = groupThreadCpuMicros(started.pgid);
      const threads = { main: 0, events: 0, other: 0 };
      for (const k of ['main', 'events', 'other'] as const) threads[k] = (threadsAfter[k] - threadsBefore[k]) / 1e6 / elapsed;
      const late = seen.map((s) => s.late).sort((a, b) => a - b);
      // Per minute of the phase: evaluations finished in it and the latest of them after its due time.
      const minutes: Array<{ evaluations: number; maxLate: number }> = [];
      for (const s of seen) {
        const m = Math.min(Math.floor(s.at / 60_000), Math.max(0, Math.ceil(elapsed / 60) - 1));
        while (minutes.length <= m) minutes.push({ evaluations: 0, maxLate: 0 });
        minutes[m]!.evaluations++;
        minutes[m]!.maxLate = Math.max(minutes[m]!.maxLate, s.late);
      }
      const missed = missedDue.size;
      const p: Phase = {
        kind,
        seconds: elapsed,
        cores: cpu / elapsed,
        extraCores: (cpuSecondsOf(chPids) - extraBefore) / elapsed,
        threads,
        latencies,
        p99: { media: p99(latencies.media), query: p99(latencies.query) },
        evaluations: seen.length,
        missed,
        load: os.loadavg()[0]!,
      };
      phases.push(p);
      const m = [...latencies.media].sort((a, b) => a - b);
      const q = [...latencies.query].sort((a, b) => a - b);
      console.log(
        `  ${kind === 'created' ? 'the minute after creation' : kind === 'on' ? 'on ' : kind === 'neighbour' ? `neighbour (${fmt(neighbourCores, 2)} cores)` : 'off'} ${fmt(elapsed)} s: server ${fmt(p.cores, 2)} cores (main ${fmt(threads.main, 2)}, events ${fmt(threads.events, 2)}, other ${fmt(threads.other, 2)})${chPids.length ? ` + ClickHouse ${fmt(p.extraCores, 2)}` : ''}; ` +
          `API p50/p99 media ${fmt(quantile(m, 0.5), 1)}/${fmt(p.p99.media, 1)} ms, query ${fmt(quantile(q, 0.5), 1)}/${fmt(p.p99.query, 1)} ms` +
          (polling
            ? `; ${fmt(late.length)} evaluations (${fmt((late.length / elapsed) * 60)}/min), finished after due p50 ${fmt(quantile(late, 0.5) / 1000, 1)} s, p99 ${fmt(quantile(late, 0.99) / 1000, 1)} s, max ${fmt((late.at(-1) ?? NaN) / 1000, 1)} s; ` +
              `per minute ${minutes.map((x) => `${fmt(x.evaluations)} (latest ${fmt(x.maxLate / 1000, 1)} s)`).join(', ')}; ` +
              `missed their minute ${fmt(missed)} (due times not evaluated within 60 s); most overdue unclaimed ${fmt(maxOverdue / 1000, 1)} s; at most ${burst} finished between two polls (~1 s)`
            : '') +
          `; load average ${load()}`,
      );
    }

    // Warm the API path; off (no monitors yet); create them (all due at once: the creation's
    // burst, a phase of its own, compared with none); then off (paused), on (each at its slot), off, on, …
    // The warm-up is long enough for the first reads over the generated history (cold caches; on
    // ClickHouse the tenant's newest ts is read over the whole day once): a first off phase that
    // holds them had a query p99 of 16 s against 0.2–0.3 s in the later ones.
    await sleep(Number(process.env.BENCH_WARM_SECONDS ?? 30) * 1000);
    await phase('off', offSeconds);
    const channel = await json<{ id: string }>(base, token, 'POST', '/v1/channels', { name: 'bench receiver', kind: 'webhook', url: receiver.url });
    const tc = performance.now();
    for (let k = 0; k < monitorsCount; k++) await json(base, token, 'POST', '/v1/monitors', thresholdMonitor(k, channel.id, distinct));
    const statements = new Set(Array.from({ length: monitorsCount }, (_, k) => {
      const m = thresholdMonitor(k, channel.id, distinct);
      return `${m.q as string}|${m.window as string}`;
    })).size;
    console.log(`  ${fmt(monitorsCount)} monitors created in ${fmt((performance.now() - tc) / 1000, 1)} s (each due at once): ${fmt(statements)} distinct statements (q and window)${distinct ? '' : ' — BENCH_DISTINCT=1 gives each monitor its own'}`);
    poll();
    await phase('created', 60);
    // Every on phase after a pause and an off phase, the first too: a backlog of the creation's
    // burst (on a loaded machine it outlasts its minute) is dropped by the pause instead of
    // landing in the first on phase, which measures the steady state.
    for (let r = 0; r < rounds; r++) {
      await pause();
      await phase('off', offSeconds);
      resume();
      await phase('on', cycles * 60);
    }
    // The same run's control: the cores the monitors took (server and ClickHouse, on − off), taken
    // by a process that is not the server, with no monitor due. What the API's p99 loses to
    // sharing the machine's cores at all, beside what it loses to the monitors.
    if (process.env.BENCH_NEIGHBOUR === '1') {
      const onSoFar = phases.filter((p) => p.kind === 'on');
      const offSoFar = phases.filter((p) => p.kind === 'off');
      const take = Math.max(0.05, median(onSoFar.map((p) => p.cores + p.extraCores)) - median(offSoFar.map((p) => p.cores + p.extraCores)));
      for (let r = 0; r < rounds; r++) {
        await pause();
        await phase('off', offSeconds);
        const burner = startNeighbour(take);
        const before = cpuSecondsOf(burner.pids);
        const t = performance.now();
        neighbourCores = take;
        await phase('neighbour', cycles * 60);
        neighbourTaken.push((cpuSecondsOf(burner.pids) - before) / ((performance.now() - t) / 1000));
        burner.stop();
      }
    }
    running = false;
    await Promise.all([trickle, api]);
    meta.close();

    const on = phases.filter((p) => p.kind === 'on');
    const off = phases.filter((p) => p.kind === 'off');
    const evaluations = on.reduce((a, p) => a + p.evaluations, 0);
    const onSeconds = on.reduce((a, p) => a + p.seconds, 0);
    const offCores = median(off.map((p) => p.cores));
    const onCores = on.reduce((a, p) => a + p.cores * p.seconds, 0) / onSeconds;
    const perEval = ((onCores - offCores) * onSeconds) / evaluations;
    const chPerEval = chPids.length ? ((on.reduce((a, p) => a + p.extraCores * p.seconds, 0) / onSeconds - median(off.map((p) => p.extraCores))) * onSeconds) / evaluations : NaN;
    const missed = on.reduce((a, p) => a + p.missed, 0);
    console.log(
      `  evaluations                    ${fmt(evaluations)} in ${fmt(onSeconds)} s on = ${fmt((evaluations / onSeconds) * 60)}/min (goal ${fmt(monitorsCount)}/min: each monitor within its minute); ` +
        `missed their minute: ${fmt(missed)} — goal ${missed === 0 && evaluations > 0 ? 'met' : 'not met'} (the count per phase is ` +
        `${fmt(monitorsCount)} a minute less those whose slot fell in the phase's last seconds: evaluated after it ends, at the pause)`,
    );
    console.log(`  CPU per evaluation             ${fmt(perEval * 1000, 1)} ms of the server's (on − off, all threads)${chPids.length ? ` + ${fmt(chPerEval * 1000, 1)} ms of ClickHouse's (its servers' /proc, on − off)` : ''}`);
    const perEvalOn = (k: 'main' | 'events' | 'other') =>
      (((on.reduce((a, p) => a + p.threads[k] * p.seconds, 0) / onSeconds - median(off.map((p) => p.threads[k]))) * onSeconds) / evaluations) * 1000;
    console.log(`  … by thread                    event loop ${fmt(perEvalOn('main'), 1)} ms, events worker and DuckDB ${fmt(perEvalOn('events'), 1)} ms, libuv pool and V8 helpers ${fmt(perEvalOn('other'), 1)} ms`);
    // The goal's ratio: each phase's own p99, the median of the on phases over the median of the
    // off phases of the same run (phases alternate, so the machine's drift lands on both sides);
    // and each on phase against the off phase before it.
    // The off phase just before a phase (the first off phase, before the monitors existed, precedes the creation's minute).
    const offBefore = (p: Phase) => phases.slice(0, phases.indexOf(p)).filter((x) => x.kind === 'off').at(-1)!;
    const neighbour = phases.filter((p) => p.kind === 'neighbour');
    for (const kind of ['media', 'query'] as const) {
      const onP = on.map((p) => p.p99[kind]);
      const offP = off.map((p) => p.p99[kind]);
      const ratio = median(onP) / median(offP);
      const pairs = on.map((p) => `${fmt(p.p99[kind] / offBefore(p).p99[kind], 2)}× (load ${fmt(offBefore(p).load, 1)} → ${fmt(p.load, 1)})`);
      console.log(
        `  API ${kind === 'media' ? 'GET /v1/media?limit=10' : 'POST /v1/query page  '}    p99 median of on phases ${fmt(median(onP), 1)} ms ÷ of off phases ${fmt(median(offP), 1)} ms = ${fmt(ratio, 2)}× ` +
          `(goal 0.90–1.10×: ${ratio > 1.1 ? 'not met' : ratio >= 0.9 ? 'met' : 'met, on faster than off: the machine moved'}); on ÷ the off before it: ${pairs.join(', ')}; per phase on ${onP.map((x) => fmt(x, 1)).join(' / ')}, off ${offP.map((x) => fmt(x, 1)).join(' / ')} ms`,
      );
      if (neighbour.length) {
        const nP = neighbour.map((p) => p.p99[kind]);
        console.log(
          `      the same run's neighbour (another process taking ${neighbourTaken.map((c) => fmt(c, 2)).join(' / ')} cores, no monitor due): p99 median ${fmt(median(nP), 1)} ms = ${fmt(median(nP) / median(offP), 2)}× the off phases'; ` +
            `each over the off before it: ${neighbour.map((p) => `${fmt(p.p99[kind] / offBefore(p).p99[kind], 2)}×`).join(', ')}`,
        );
      }
    }
    const notified = receiver.arrivals.length;
    console.log(`  notifications received         ${notified} (${receiver.arrivals.filter((a) => a.status === 'firing').length} firing, ${receiver.arrivals.filter((a) => a.status === 'resolved').length} resolved)`);
  } finally {
    await server?.stop();
    receiver.child.kill();
    if (hosts) await hosts.close();
    if (chUrl) await dropClickHouseDatabase(chUrl);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const parts = (process.env.BENCH_PARTS ?? 'match,threshold,clickhouse').split(',');
  console.log(`bench:monitors — ${os.cpus().length} cores, Node ${process.version}, load average ${load()} (1 / 5 / 15 min)`);
  if (parts.includes('match')) await matchPart();
  if (parts.includes('threshold')) await thresholdPart('duckdb');
  if (parts.includes('clickhouse')) await thresholdPart('clickhouse');
  agent.destroy();
  process.exit(0);
}

if (process.argv[2] === 'receiver') receiverProcess();
else await main();
