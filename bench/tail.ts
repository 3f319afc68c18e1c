// npm run bench:tail — live-tail delivery latency and memory. Starts the server from source as
// its own process, opens 1, 100 and 1,000 sessions of one tenant (the worst case for fan-out:
// every session matches every event), then ingests one event per round and times its arrival
// at every session from the ingest request's answer (p50/p99). Prints the server's RSS per open
// idle session. Goals (issue 6): p99 < 250 ms with 1,000 sessions; < 50 KB per idle session.
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
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { createParser } from 'eventsource-parser';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { TailClient } from '../src/tail/test-client.js';
import { fmt, freePort, startOpsctl, tcpReachable, tempDir, type Started } from './support.js';
import { benchDatabaseUrl, dropClickHouseDatabase, findClickHouse } from './clickhouse-support.js';

const steps = (process.env.BENCH_SESSIONS ?? '1,100,1000').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 30);
const crossProcess = process.env.BENCH_CROSS !== '0';
const crossSessions = Number(process.env.BENCH_CROSS_SESSIONS ?? Math.max(...steps));
const chSessions = Number(process.env.BENCH_CH_SESSIONS ?? Math.max(...steps));
const maxSessions = Math.max(...steps, crossProcess ? crossSessions : 0, chSessions);
const natsUrl = 'nats://127.0.0.1:4222';
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
const clickhouse = await findClickHouse();
const chDataDir = tempDir('bench-tail-ch-');
fs.cpSync(dataDir, chDataDir, { recursive: true });

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

const results: string[] = [];
let chResult: string | undefined;
const crossResults: string[] = [];
let baseline: number | undefined;
let singleAtCross: Latencies | undefined;
const started: Started[] = [];
try {
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

  if (!('skipped' in clickhouse)) {
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

  if (crossProcess) {
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
  }
} finally {
  closeSessions();
  await Promise.all(started.map((s) => s.stop()));
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(chDataDir, { recursive: true, force: true });
}

console.log(`\nlive tail, ${rounds} rounds of one event per step, one tenant, every session matching; baseline RSS ${fmt((baseline ?? NaN) / 1024, 1)} MB`);
for (const line of results) console.log(line);
if ('skipped' in clickhouse) console.log(`ClickHouse skipped: ${clickhouse.skipped}`);
else if (chResult) console.log(`${chResult}; limit p99 < ${limitMs} ms`);
if (crossProcess) {
  console.log(
    `\nacross processes: events node + API processes A and B (one data dir, one secret key), ${crossSessions} sessions held on A, each event ingested on B, ` +
      `${rounds} rounds ${30}–${30 + pollMs} ms apart; limit p99 < ${limitMs} ms`,
  );
  if (singleAtCross) console.log(`  one process  ${describe(singleAtCross)}`);
  for (const line of crossResults) console.log(line);
}
