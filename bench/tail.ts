// npm run bench:tail — live-tail delivery latency and memory. Starts the server from source as
// its own process, opens 1, 100 and 1,000 sessions of one tenant (the worst case for fan-out:
// every session matches every event), then ingests one event per round and times its arrival
// at every session from the ingest request's answer (p50/p99). Prints the server's RSS per open
// idle session. Goals: p99 < 250 ms with 1,000 sessions; < 50 KB per idle session.
//
// Then, across processes (BENCH_CROSS=0 leaves it out): an events node (`opsctl events-node`)
// and two API processes A and B (`opsctl serve` with OPS_EVENTS_URL, one OPS_SECRET_KEY, one
// OPS_DATA_DIR so SQLite's metadata is shared), BENCH_CROSS_SESSIONS sessions (default: the
// largest step) held on A, each event ingested on B: event → delivered on A. Once with
// OPS_NATS_URL (B's wake-up reaches A over NATS at nats://127.0.0.1:4222, skipped when nothing
// answers there), once without (A finds the event at its next poll, every OPS_TAIL_POLL_MS).
// Every process started here is killed when the bench ends, however it ends (bench/support.ts).
//
// Then one more step in one process, BENCH_CH_SESSIONS sessions (default: the largest step),
// with the server's events on ClickHouse (OPS_EVENTS_URL=clickhouse://…, a database of this
// run's own, dropped at the end; bench/clickhouse-support.ts says which ClickHouse, or one line
// why it was skipped): the same rounds, printed under the DuckDB steps.
//
// Then live tail under sustained ingest, on each engine, on one host and across two (the
// "sustained" part): BENCH_RATE events/s (default 14,000) for BENCH_SECONDS (20), in requests of
// BENCH_REQUEST_EVENTS (100) sent on a fixed schedule (open loop, at most 512 in flight: on
// ClickHouse an ingest is answered once loaded), one event in ten matching the query of
// BENCH_SUSTAINED_SESSIONS sessions per host (3), `severity >= error`. Per run: the rate
// acknowledged, delivered ÷ matching (summed over the sessions) when the last ingest is answered
// and after up to BENCH_DRAIN_MS (20,000) more, and each matching event's delivery from its
// ingest's answer at every session (p50, p99; 0 when it arrived before the answer) and from
// its request, with ClickHouse's p99 beside DuckDB's of the same run.
//   one host:   `opsctl serve` (DuckDB), `opsctl serve` with OPS_EVENTS_URL=clickhouse://…
//   two hosts:  DuckDB: an events node and API processes A and B over NATS; ClickHouse: A and B,
//               each an ingester with a log of its own (B as OPS_WORKER_INDEX=1, so its log is
//               events-1 in the shared data directory), over NATS. Ingest alternates between A
//               and B; sessions on both.
// BENCH_PARTS=rounds,sustained (default both) picks the parts; BENCH_ENGINE=duckdb or clickhouse
// runs one engine only (no ratio then); BENCH_HOSTS=1,2 (default both) the sustained topologies.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { createParser } from 'eventsource-parser';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { TailClient } from '../src/test-support/tail/test-client.js';
import { fmt, freePort, startOpsctl, tcpReachable, tempDir, type Started } from './support.js';
import { benchDatabaseUrl, dropClickHouseDatabase, findClickHouse } from './clickhouse-support.js';

const steps = (process.env.BENCH_SESSIONS ?? '1,100,1000').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 30);
const crossProcess = process.env.BENCH_CROSS !== '0';
const crossSessions = Number(process.env.BENCH_CROSS_SESSIONS ?? Math.max(...steps));
const chSessions = Number(process.env.BENCH_CH_SESSIONS ?? Math.max(...steps));
const natsUrl = 'nats://127.0.0.1:4222';
const parts = new Set((process.env.BENCH_PARTS ?? 'rounds,sustained').split(','));
const engines = new Set((process.env.BENCH_ENGINE ?? 'duckdb,clickhouse').split(','));
const sustainedHosts = (process.env.BENCH_HOSTS ?? '1,2').split(',').map(Number);
const sustainedRate = Number(process.env.BENCH_RATE ?? 14_000);
const sustainedSeconds = Number(process.env.BENCH_SECONDS ?? 20);
const requestEvents = Number(process.env.BENCH_REQUEST_EVENTS ?? 100);
const sustainedSessions = Number(process.env.BENCH_SUSTAINED_SESSIONS ?? 3);
const drainMs = Number(process.env.BENCH_DRAIN_MS ?? 20_000);
/** Ingest requests in flight at most: past it the schedule waits (the rate is then what the server acknowledges). */
const maxInFlight = 512;
const maxSessions = Math.max(...steps, crossProcess ? crossSessions : 0, chSessions, sustainedSessions);
const pollMs = Number(process.env.OPS_TAIL_POLL_MS ?? 1_000);
const limitMs = 250;

// Every process of the installation shares one secret key.
const secret = crypto.randomBytes(32).toString('base64');
const dataDir = tempDir('bench-tail-');
const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir, OPS_SECRET_KEY: secret }), systemClock);
const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'enterprise', ownerEmail: 'bench@example.com' });
const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
const writer = (await ctx.tokens.create({ tenant, name: 'writer', scopes: parseScopes('all'), expiresAt: null })).token;
// At most 3 sessions per token on one host (SPEC §6): one reader token per 3 sessions.
const readers: string[] = [];
for (let i = 0; i < Math.ceil(maxSessions / 3); i++) {
  readers.push((await ctx.tokens.create({ tenant, name: `reader-${i}`, scopes: parseScopes(['logs:read']), expiresAt: null })).token);
}
await ctx.close();
// The ClickHouse step's server keeps its write-ahead log in a directory of its own, with the
// same metadata (organisation, tokens) as a copy taken before any server ran.
const clickhouse: Awaited<ReturnType<typeof findClickHouse>> = engines.has('clickhouse') ? await findClickHouse() : { skipped: 'BENCH_ENGINE leaves it out' };
const chDataDir = tempDir('bench-tail-ch-');
fs.cpSync(dataDir, chDataDir, { recursive: true });
// The sustained runs each start from this copy (the metadata only).
const templateDir = tempDir('bench-tail-template-');
fs.cpSync(dataDir, templateDir, { recursive: true });
const freshDataDir = () => {
  const dir = tempDir('bench-tail-run-');
  fs.cpSync(templateDir, dir, { recursive: true });
  return dir;
};

const common = { OPS_SECRET_KEY: secret, OPS_DATA_DIR: dataDir, OPS_LOG_LEVEL: 'warn', OPS_RATE_LIMIT_PER_SECOND: '1000000', OPS_RATE_LIMIT_BURST: '1000000' };
/** `opsctl serve` from source, answering /readyz; its API's base URL. */
async function serve(env: Record<string, string>): Promise<{ server: Started; apiUrl: string; baseUrl: string }> {
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const server = await startOpsctl({
    args: ['serve'],
    build: 'source',
    env: { ...common, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), ...env },
    ready: `${apiUrl}/readyz`,
  });
  return { server, apiUrl, baseUrl: `${apiUrl}/v1` };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssNowKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
/** Median of a few samples: the garbage collector makes a single reading jumpy. */
async function rssKb(pid: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(rssNowKb(pid));
    await sleep(300);
  }
  return samples.sort((x, y) => x - y)[2]!;
}

async function ingest(baseUrl: string, round: number): Promise<{ sent: number; answered: number }> {
  const sent = performance.now();
  const response = await fetch(`${baseUrl}/datasets/bench/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event: 'bench', severity: 'info', message: `round ${round}`, payload: { round } }),
  });
  if (response.status !== 200) throw new Error(`ingest answered ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
  return { sent, answered: performance.now() };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Warms a server: the dataset's ingest path (on `ingestUrl`) and a few tail sessions opened and closed (on `tailUrl`). */
async function warm(ingestUrl: string, tailUrl: string) {
  await ingest(ingestUrl, -1);
  for (let i = 0; i < 3; i++) {
    const session = await TailClient.open(tailUrl, readers[0]!, '');
    if ('client' in session) await session.client.close();
  }
  await sleep(1_000);
}

/**
 * The bench's own client: node:http and eventsource-parser, lighter than fetch's web streams,
 * so that 1,000 streams in this one process measure the server rather than the client.
 */
interface Arrivals {
  round: number;
  times: number[];
  expected: number;
  done: () => void;
}
let current: Arrivals | undefined;
let sockets: http.ClientRequest[] = [];
function openSession(baseUrl: string, token: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}/query/tail`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    request.on('response', (response) => {
      if (response.statusCode !== 200) return reject(new Error(`open answered ${response.statusCode}`));
      const parser = createParser({
        onEvent: (message) => {
          const at = performance.now();
          const round = (JSON.parse(message.data) as { payload: { round: number } }).payload.round;
          if (!current || round !== current.round) throw new Error(`got round ${round} outside its round`);
          current.times.push(at);
          if (current.times.length === current.expected) current.done();
        },
      });
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => parser.feed(chunk));
      resolve();
    });
    request.on('error', reject);
    request.end(JSON.stringify({ q: 'event:bench' }));
    sockets.push(request);
  });
}

/** Opens sessions on `baseUrl` until `target` are open (`open` already are), 50 at a time; returns the count. */
async function openSessions(baseUrl: string, open: number, target: number): Promise<number> {
  while (open < target) {
    const batch: Array<Promise<void>> = [];
    for (; open < target && batch.length < 50; open++) batch.push(openSession(baseUrl, readers[Math.floor(open / 3)]!));
    await Promise.all(batch);
  }
  return open;
}

function closeSessions() {
  for (const request of sockets) request.destroy();
  sockets = [];
}

interface Latencies {
  fromAnswer: number[];
  fromRequest: number[];
  early: number;
}
let round = 0;
/**
 * `rounds` events, each ingested on `ingestUrl` and timed at each of the `target` open sessions.
 * `gapMs(r)`: the pause after round r's last arrival.
 */
async function measure(ingestUrl: string, target: number, gapMs: () => number): Promise<Latencies> {
  const fromAnswer: number[] = [];
  const fromRequest: number[] = [];
  let early = 0;
  for (let r = 0; r < rounds; r++) {
    const arrivals: Arrivals = { round: round++, times: [], expected: target, done: () => undefined };
    const all = new Promise<void>((resolve) => (arrivals.done = resolve));
    current = arrivals;
    const { sent, answered } = await ingest(ingestUrl, arrivals.round);
    await Promise.race([all, sleep(10_000).then(() => Promise.reject(new Error(`round ${arrivals.round}: ${arrivals.times.length} of ${target} arrived`)))]);
    for (const at of arrivals.times) {
      if (at < answered) early++;
      fromAnswer.push(Math.max(0, at - answered));
      fromRequest.push(at - sent);
    }
    await sleep(gapMs());
  }
  fromAnswer.sort((x, y) => x - y);
  fromRequest.sort((x, y) => x - y);
  return { fromAnswer, fromRequest, early };
}

const describe = (l: Latencies) =>
  `from answer p50 ${fmt(pct(l.fromAnswer, 50), 1).padStart(6)} ms  p99 ${fmt(pct(l.fromAnswer, 99), 1).padStart(6)} ms` +
  ` (${fmt((100 * l.early) / l.fromAnswer.length, 0)}% before the answer) | from request p50 ${fmt(pct(l.fromRequest, 50), 1)} ms p99 ${fmt(pct(l.fromRequest, 99), 1)} ms`;

/** One event in ten matches the sustained sessions' query (`severity >= error`). */
const sustainedQuery = 'severity >= error';
const matching = (n: number) => n % 10 === 0;

/** A session of the sustained part: which event (payload.n) arrived when; node:http and eventsource-parser as above. */
interface Counting {
  ns: number[];
  times: number[];
}
function openCounting(baseUrl: string, token: string): Promise<Counting> {
  return new Promise((resolve, reject) => {
    const counting: Counting = { ns: [], times: [] };
    const request = http.request(`${baseUrl}/query/tail`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    request.on('response', (response) => {
      if (response.statusCode !== 200) return reject(new Error(`open answered ${response.statusCode}`));
      const parser = createParser({
        onEvent: (message) => {
          counting.times.push(performance.now());
          counting.ns.push((JSON.parse(message.data) as { payload: { n: number } }).payload.n);
        },
      });
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => parser.feed(chunk));
      resolve(counting);
    });
    request.on('error', reject);
    request.end(JSON.stringify({ q: sustainedQuery }));
    sockets.push(request);
  });
}

interface Sustained {
  label: string;
  engine: 'duckdb' | 'clickhouse';
  hosts: number;
  /** Events acknowledged per second over the load. */
  rate: number;
  failed: number;
  /** Delivered ÷ matching over every session, when the last ingest was answered and at the end of the drain. */
  atEnd: number;
  after: number;
  /** ms from the end of the load until every session had every matching event (undefined: not within the drain). */
  drainedMs: number | undefined;
  duplicates: number;
  p50: number;
  p99: number;
  /** The same from when the ingest request was sent. */
  requestP99: number;
  /** Deliveries that arrived before their ingest's answer. */
  early: number;
}

/**
 * The sustained load: `sustainedRate` events/s for `sustainedSeconds`, requests alternating
 * between `ingestUrls`, the `sessions` counting what arrives.
 */
async function sustain(label: string, engine: Sustained['engine'], hosts: number, sessions: Counting[], ingestUrls: string[]): Promise<Sustained> {
  const total = Math.round(sustainedRate * sustainedSeconds);
  const ackAt = new Float64Array(total).fill(NaN);
  const sentAt = new Float64Array(total).fill(NaN);
  const interval = (1_000 * requestEvents) / sustainedRate;
  let inFlight = 0;
  let failed = 0;
  const pending: Array<Promise<void>> = [];
  const send = async (url: string, first: number, count: number) => {
    const lines: string[] = [];
    for (let n = first; n < first + count; n++) {
      lines.push(JSON.stringify({ event: 'load', severity: matching(n) ? (n % 20 === 0 ? 'fatal' : 'error') : n % 3 ? 'info' : 'debug', message: `event ${n}`, payload: { n, k: n % 7 } }));
    }
    sentAt.fill(performance.now(), first, first + count);
    try {
      const response = await fetch(`${url}/datasets/bench/ingest`, {
        method: 'POST',
        headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/x-ndjson' },
        body: lines.join('\n'),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`ingest answered ${response.status}`);
      ackAt.fill(performance.now(), first, first + count);
    } catch {
      failed += count;
    }
  };
  const start = performance.now();
  for (let r = 0; r * requestEvents < total; r++) {
    const wait = start + r * interval - performance.now();
    if (wait > 1) await sleep(wait);
    // The server is behind: the rate becomes what it acknowledges.
    while (inFlight >= maxInFlight) await sleep(1);
    inFlight++;
    const first = r * requestEvents;
    pending.push(send(ingestUrls[r % ingestUrls.length]!, first, Math.min(requestEvents, total - first)).finally(() => inFlight--));
  }
  await Promise.all(pending);
  const end = performance.now();
  let expected = 0;
  for (let n = 0; n < total; n++) if (matching(n) && !Number.isNaN(ackAt[n]!)) expected++;
  expected *= sessions.length;
  const delivered = () => sessions.reduce((sum, s) => sum + s.ns.length, 0);
  const atEnd = delivered();
  let drainedMs: number | undefined;
  while (performance.now() - end < drainMs) {
    if (delivered() >= expected) {
      drainedMs = performance.now() - end;
      break;
    }
    await sleep(50);
  }
  await sleep(200);
  const latencies: number[] = [];
  const fromRequest: number[] = [];
  let duplicates = 0;
  let early = 0;
  let counted = 0;
  for (const s of sessions) {
    const seen = new Uint8Array(total);
    s.ns.forEach((n, i) => {
      if (seen[n]) return void duplicates++;
      seen[n] = 1;
      counted++;
      const at = s.times[i]!;
      const acked = ackAt[n]!;
      if (at < acked) early++;
      latencies.push(Math.max(0, at - acked));
      fromRequest.push(at - sentAt[n]!);
    });
  }
  latencies.sort((x, y) => x - y);
  fromRequest.sort((x, y) => x - y);
  return {
    label,
    engine,
    hosts,
    rate: (total - failed) / ((end - start) / 1_000),
    failed,
    atEnd: atEnd / expected,
    after: counted / expected,
    drainedMs,
    duplicates,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    requestP99: pct(fromRequest, 99),
    early: early / Math.max(1, latencies.length),
  };
}

/** Opens `sustainedSessions` sessions on each of `urls`, lets them settle, runs the load, closes them. */
async function sustainOn(label: string, engine: Sustained['engine'], sessionUrls: string[], ingestUrls: string[]): Promise<Sustained> {
  const sessions: Counting[] = [];
  for (const url of sessionUrls) for (let i = 0; i < sustainedSessions; i++) sessions.push(await openCounting(url, readers[Math.floor(i / 3)]!));
  // Sessions of another host are announced over NATS (relay.ts): let that happen before the load.
  await sleep(1_500);
  const result = await sustain(label, engine, sessionUrls.length, sessions, ingestUrls);
  closeSessions();
  console.log(describeSustained(result));
  return result;
}

const describeSustained = (r: Sustained) =>
  `${r.label.padEnd(34)} ${fmt(r.rate).padStart(7)} ev/s acked${r.failed ? ` (${fmt(r.failed)} failed)` : ''} | delivered ÷ matching ${fmt(r.atEnd, 3)} at the end of the load, ` +
  `${fmt(r.after, 3)} ${r.drainedMs === undefined ? `after ${fmt(drainMs / 1_000)} s more (not complete)` : `${fmt(r.drainedMs / 1_000, 1)} s later`}` +
  `${r.duplicates ? `, ${fmt(r.duplicates)} repeated` : ''} | from the answer p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms (${fmt(100 * r.early, 0)}% before the answer), from the request p99 ${fmt(r.requestP99, 1)} ms`;

const results: string[] = [];
let chResult: string | undefined;
const crossResults: string[] = [];
let baseline: number | undefined;
let singleAtCross: Latencies | undefined;
const started: Started[] = [];
const sustainedResults: Sustained[] = [];
const sustainedSkipped: string[] = [];
const runDirs: string[] = [];
/** Waits until the servers show NATS up in /readyz (or a wake-up would reach only the process that sent it). */
async function natsUpOn(urls: string[]): Promise<void> {
  for (const url of urls) {
    const body = (await (await fetch(`${url}/readyz`)).json()) as { stores: Record<string, { state: string }> };
    if (body.stores.nats?.state !== 'up') throw new Error(`${url}: NATS is ${body.stores.nats?.state ?? 'absent'} in /readyz`);
  }
}
try {
  if (parts.has('rounds') && engines.has('duckdb')) {
  // One process: sessions and ingest on the same server.
  const one = await serve({});
  started.push(one.server);
  const pid = one.server.child.pid!;
  // Warm the server (dataset created, DuckDB and routes loaded) before the memory baseline.
  await warm(one.baseUrl, one.baseUrl);
  baseline = await rssKb(pid);
  let open = 0;
  for (const target of steps) {
    open = await openSessions(one.baseUrl, open, target);
    await sleep(1_500);
    const rss = await rssKb(pid);
    const latencies = await measure(one.baseUrl, target, () => 30);
    if (target === crossSessions) singleAtCross = latencies;
    results.push(`${String(target).padStart(5)} sessions | ${describe(latencies)} | server RSS ${fmt(rss / 1024, 1)} MB, ${fmt((rss - baseline) / target, 1)} KB per open session`);
    console.log(results.at(-1));
  }
  closeSessions();
  await one.server.stop();
  }

  if (parts.has('rounds') && !('skipped' in clickhouse)) {
    // One process again, its events on ClickHouse: ingest loads into ClickHouse before the
    // sessions' read (read-your-writes), so delivery includes the load.
    const chUrl = benchDatabaseUrl(clickhouse.base, 'tail');
    try {
      const ch = await serve({ OPS_DATA_DIR: chDataDir, OPS_EVENTS_URL: chUrl });
      started.push(ch.server);
      const chPid = ch.server.child.pid!;
      await warm(ch.baseUrl, ch.baseUrl);
      const chBaseline = await rssKb(chPid);
      await openSessions(ch.baseUrl, 0, chSessions);
      await sleep(1_500);
      const rss = await rssKb(chPid);
      const latencies = await measure(ch.baseUrl, chSessions, () => 30);
      chResult =
        `${String(chSessions).padStart(5)} sessions | ${describe(latencies)} | server RSS ${fmt(rss / 1024, 1)} MB, ${fmt((rss - chBaseline) / chSessions, 1)} KB per open session` +
        ` | events on ClickHouse ${clickhouse.version} (load average ${fmt(os.loadavg()[0]!, 1)})`;
      console.log(chResult);
      closeSessions();
      await ch.server.stop();
    } finally {
      await dropClickHouseDatabase(chUrl);
    }
  }

  if (parts.has('rounds') && engines.has('duckdb') && crossProcess) {
    // The events node takes over the store the single process wrote (one owner at a time).
    const nodePort = await freePort();
    const node = await startOpsctl({
      args: ['events-node'],
      build: 'source',
      env: { ...common, OPS_EVENTS_NODE_HOST: '127.0.0.1', OPS_EVENTS_NODE_PORT: String(nodePort) },
      ready: `http://127.0.0.1:${nodePort}/`,
      readyWhen: 'any',
    });
    started.push(node);
    const natsUp = await tcpReachable('127.0.0.1', 4222);
    if (!natsUp) crossResults.push(`  with NATS   skipped: nothing answers at ${natsUrl}`);
    for (const nats of natsUp ? [true, false] : [false]) {
      const env = { OPS_EVENTS_URL: `http://127.0.0.1:${nodePort}`, ...(nats ? { OPS_NATS_URL: natsUrl } : {}) };
      const a = await serve(env);
      started.push(a.server);
      const b = await serve(env);
      started.push(b.server);
      if (nats) {
        // Both must be connected to NATS, or the wake-up would only reach B itself.
        for (const s of [a, b]) {
          const body = (await (await fetch(`${s.apiUrl}/readyz`)).json()) as { stores: Record<string, { state: string }> };
          if (body.stores.nats?.state !== 'up') throw new Error(`${s.apiUrl}: NATS is ${body.stores.nats?.state ?? 'absent'} in /readyz`);
        }
      }
      await warm(b.baseUrl, a.baseUrl);
      await openSessions(a.baseUrl, 0, crossSessions);
      await sleep(1_500);
      // A pause of random length between rounds, so that each ingest falls at a random point of
      // A's poll timer (a fixed pause would put every one at the same point of it).
      const latencies = await measure(b.baseUrl, crossSessions, () => 30 + Math.random() * pollMs);
      crossResults.push(`  ${nats ? 'with NATS   ' : 'without NATS'} ${describe(latencies)}`);
      console.log(`${crossSessions} sessions on A, ingest on B, ${nats ? 'wake-ups over NATS' : `no NATS (A polls every ${pollMs} ms)`}: ${describe(latencies)}`);
      closeSessions();
      await Promise.all([a.server.stop(), b.server.stop()]);
    }
    await node.stop();
  }

  if (parts.has('sustained')) {
    const natsUp = await tcpReachable('127.0.0.1', 4222);
    for (const hosts of sustainedHosts) {
      if (hosts === 2 && !natsUp) {
        sustainedSkipped.push(`two hosts skipped: nothing answers at ${natsUrl}`);
        continue;
      }
      if (engines.has('duckdb')) {
        const dir = freshDataDir();
        runDirs.push(dir);
        if (hosts === 1) {
          const one = await serve({ OPS_DATA_DIR: dir });
          started.push(one.server);
          await warm(one.baseUrl, one.baseUrl);
          sustainedResults.push(await sustainOn('one host, DuckDB', 'duckdb', [one.baseUrl], [one.baseUrl]));
          await one.server.stop();
        } else {
          const nodePort = await freePort();
          const node = await startOpsctl({
            args: ['events-node'],
            build: 'source',
            env: { ...common, OPS_DATA_DIR: dir, OPS_EVENTS_NODE_HOST: '127.0.0.1', OPS_EVENTS_NODE_PORT: String(nodePort) },
            ready: `http://127.0.0.1:${nodePort}/`,
            readyWhen: 'any',
          });
          started.push(node);
          const env = { OPS_DATA_DIR: dir, OPS_EVENTS_URL: `http://127.0.0.1:${nodePort}`, OPS_NATS_URL: natsUrl };
          const [a, b] = [await serve(env), await serve(env)];
          started.push(a.server, b.server);
          await natsUpOn([a.apiUrl, b.apiUrl]);
          await warm(b.baseUrl, a.baseUrl);
          sustainedResults.push(await sustainOn('two hosts, DuckDB (events node)', 'duckdb', [a.baseUrl, b.baseUrl], [a.baseUrl, b.baseUrl]));
          await Promise.all([a.server.stop(), b.server.stop()]);
          await node.stop();
        }
      }
      if (!('skipped' in clickhouse)) {
        const dir = freshDataDir();
        runDirs.push(dir);
        const chUrl = benchDatabaseUrl(clickhouse.base, `tail${hosts}h`);
        try {
          if (hosts === 1) {
            const one = await serve({ OPS_DATA_DIR: dir, OPS_EVENTS_URL: chUrl });
            started.push(one.server);
            await warm(one.baseUrl, one.baseUrl);
            sustainedResults.push(await sustainOn('one host, ClickHouse', 'clickhouse', [one.baseUrl], [one.baseUrl]));
            await one.server.stop();
          } else {
            const env = { OPS_DATA_DIR: dir, OPS_EVENTS_URL: chUrl, OPS_NATS_URL: natsUrl };
            // B keeps its log in events-1 of the shared directory, as a second worker would.
            const [a, b] = [await serve(env), await serve({ ...env, OPS_WORKER_INDEX: '1' })];
            started.push(a.server, b.server);
            await natsUpOn([a.apiUrl, b.apiUrl]);
            await warm(b.baseUrl, a.baseUrl);
            sustainedResults.push(await sustainOn('two hosts, ClickHouse', 'clickhouse', [a.baseUrl, b.baseUrl], [a.baseUrl, b.baseUrl]));
            await Promise.all([a.server.stop(), b.server.stop()]);
          }
        } finally {
          await dropClickHouseDatabase(chUrl);
        }
      }
    }
  }
} finally {
  closeSessions();
  await Promise.all(started.map((s) => s.stop()));
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(chDataDir, { recursive: true, force: true });
  fs.rmSync(templateDir, { recursive: true, force: true });
  for (const dir of runDirs) fs.rmSync(dir, { recursive: true, force: true });
}

if (parts.has('rounds')) {
  console.log(`\nlive tail, ${rounds} rounds of one event per step, one tenant, every session matching; baseline RSS ${fmt((baseline ?? NaN) / 1024, 1)} MB`);
  for (const line of results) console.log(line);
  if ('skipped' in clickhouse) console.log(`ClickHouse skipped: ${clickhouse.skipped}`);
  else if (chResult) console.log(`${chResult}; limit p99 < ${limitMs} ms`);
  if (crossProcess && engines.has('duckdb')) {
    console.log(
      `\nacross processes: events node + API processes A and B (one data dir, one secret key), ${crossSessions} sessions held on A, each event ingested on B, ` +
        `${rounds} rounds ${30}–${30 + pollMs} ms apart; limit p99 < ${limitMs} ms`,
    );
    if (singleAtCross) console.log(`  one process  ${describe(singleAtCross)}`);
    for (const line of crossResults) console.log(line);
  }
}
if (parts.has('sustained')) {
  console.log(
    `\nlive tail under sustained ingest: ${fmt(sustainedRate)} events/s for ${sustainedSeconds} s in requests of ${requestEvents}, ` +
      `${sustainedSessions} sessions per host on \`${sustainedQuery}\` (1 event in 10); goal: delivered ÷ matching 1.000, p99 from the answer within 2× DuckDB's (load average ${fmt(os.loadavg()[0]!, 1)})`,
  );
  // A p99 below 1 ms is counted as 1 ms in a ratio. Across two hosts DuckDB's tail goes through the
  // events node, so ClickHouse's is also set beside DuckDB's on one host, the stricter reference.
  const times = (r: Sustained, duck: Sustained | undefined, where: string) => (duck ? `${fmt(Math.max(r.p99, 1) / Math.max(duck.p99, 1), 2)}× DuckDB's ${where} (${fmt(duck.p99, 1)} ms)` : '');
  for (const r of sustainedResults) {
    const ratios =
      r.engine !== 'clickhouse'
        ? []
        : [
            times(r, sustainedResults.find((d) => d.engine === 'duckdb' && d.hosts === r.hosts), r.hosts === 1 ? 'on one host' : 'across two'),
            r.hosts > 1 ? times(r, sustainedResults.find((d) => d.engine === 'duckdb' && d.hosts === 1), 'on one host') : '',
          ].filter(Boolean);
    console.log(`  ${describeSustained(r)}${ratios.length ? ` | p99 ${ratios.join(', ')}` : ''}`);
  }
  for (const line of sustainedSkipped) console.log(`  ${line}`);
  if ('skipped' in clickhouse) console.log(`  ClickHouse skipped: ${clickhouse.skipped}`);
}
