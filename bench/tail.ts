// npm run bench:tail — live-tail delivery latency and memory. Starts the server from source as
// its own process, opens 1, 100 and 1,000 sessions of one tenant (the worst case for fan-out:
// every session matches every event), then ingests one event per round and times its arrival
// at every session from the ingest request's answer (p50/p99). Prints the server's RSS per open
// idle session. Goals (issue 6): p99 < 250 ms with 1,000 sessions; < 50 KB per idle session.
import fs from 'node:fs';
import http from 'node:http';
import { createParser } from 'eventsource-parser';
import { spawn } from 'node:child_process';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { systemClock } from '../src/shared/clock.js';
import { parseScopes } from '../src/tokens/token-service.js';
import { TailClient } from '../src/tail/test-client.js';
import { fmt, freePort, tempDir } from './support.js';

const steps = (process.env.BENCH_SESSIONS ?? '1,100,1000').split(',').map(Number);
const rounds = Number(process.env.BENCH_ROUNDS ?? 30);
const maxSessions = Math.max(...steps);

const dataDir = tempDir('bench-tail-');
const ctx = await createContext(loadConfig({ OPS_DATA_DIR: dataDir }), systemClock);
const org = await ctx.orgs.createOrg({ name: 'Bench', plan: 'enterprise', ownerEmail: 'bench@example.com' });
const tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' as const };
const writer = (await ctx.tokens.create({ tenant, name: 'writer', scopes: parseScopes('all'), expiresAt: null })).token;
// At most 3 sessions per token on one host (SPEC §6): one reader token per 3 sessions.
const readers: string[] = [];
for (let i = 0; i < Math.ceil(maxSessions / 3); i++) {
  readers.push((await ctx.tokens.create({ tenant, name: `reader-${i}`, scopes: parseScopes(['logs:read']), expiresAt: null })).token);
}
await ctx.close();

const port = await freePort();
const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
  env: {
    ...process.env,
    OPS_HOST: '127.0.0.1',
    OPS_PORT: String(port),
    OPS_CDN_PORT: String(await freePort()),
    OPS_DATA_DIR: dataDir,
    OPS_LOG_LEVEL: 'warn',
    OPS_RATE_LIMIT_PER_SECOND: '1000000',
    OPS_RATE_LIMIT_BURST: '1000000',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const apiUrl = `http://127.0.0.1:${port}`;
const baseUrl = `${apiUrl}/v1`;
for (let i = 0; i < 300; i++) {
  try {
    if ((await fetch(`${apiUrl}/readyz`)).ok) break;
  } catch {
    await new Promise((r) => setTimeout(r, 100));
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssNowKb = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN);
/** Median of a few samples: the garbage collector makes a single reading jumpy. */
async function rssKb(): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(rssNowKb());
    await sleep(300);
  }
  return samples.sort((x, y) => x - y)[2]!;
}

async function ingest(round: number): Promise<{ sent: number; answered: number }> {
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

// Warm the server (dataset created, DuckDB and routes loaded) before the memory baseline.
await ingest(-1);
for (let i = 0; i < 3; i++) {
  const warm = await TailClient.open(baseUrl, readers[0]!, '');
  if ('client' in warm) await warm.client.close();
}
await sleep(1_000);
const baseline = await rssKb();

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
const sockets: http.ClientRequest[] = [];
function openSession(token: string): Promise<void> {
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

const results: string[] = [];
let open = 0;
let round = 0;
for (const target of steps) {
  while (open < target) {
    const batch: Array<Promise<void>> = [];
    for (; open < target && batch.length < 50; open++) batch.push(openSession(readers[Math.floor(open / 3)]!));
    await Promise.all(batch);
  }
  await sleep(1_500);
  const rss = await rssKb();
  const fromAnswer: number[] = [];
  const fromRequest: number[] = [];
  let early = 0;
  for (let r = 0; r < rounds; r++) {
    const arrivals: Arrivals = { round: round++, times: [], expected: target, done: () => undefined };
    const all = new Promise<void>((resolve) => (arrivals.done = resolve));
    current = arrivals;
    const { sent, answered } = await ingest(arrivals.round);
    await Promise.race([all, sleep(10_000).then(() => Promise.reject(new Error(`round ${arrivals.round}: ${arrivals.times.length} of ${target} arrived`)))]);
    for (const at of arrivals.times) {
      if (at < answered) early++;
      fromAnswer.push(Math.max(0, at - answered));
      fromRequest.push(at - sent);
    }
    await sleep(30);
  }
  fromAnswer.sort((x, y) => x - y);
  fromRequest.sort((x, y) => x - y);
  results.push(
    `${String(target).padStart(5)} sessions | from answer p50 ${fmt(pct(fromAnswer, 50), 1).padStart(6)} ms  p99 ${fmt(pct(fromAnswer, 99), 1).padStart(6)} ms` +
      ` (${fmt((100 * early) / fromAnswer.length, 0)}% before the answer) | from request p50 ${fmt(pct(fromRequest, 50), 1)} ms p99 ${fmt(pct(fromRequest, 99), 1)} ms` +
      ` | server RSS ${fmt(rss / 1024, 1)} MB, ${fmt((rss - baseline) / target, 1)} KB per open session`,
  );
  console.log(results.at(-1));
}

for (const request of sockets) request.destroy();
await new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM')));
fs.rmSync(dataDir, { recursive: true, force: true });
console.log(`\nlive tail, ${rounds} rounds of one event per step, one tenant, every session matching; baseline RSS ${fmt(baseline / 1024, 1)} MB`);
for (const line of results) console.log(line);
