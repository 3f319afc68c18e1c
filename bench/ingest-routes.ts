// The shipper routes beside native NDJSON (issue #29): the same events, the same clients, one
// server, rounds alternating between the three routes so the machine's load falls on each alike.
// Used by bench/ingest.ts (`npm run bench:ingest`; BENCH_ROUTES=0 leaves it out).
import fs from 'node:fs';
import http from 'node:http';
import { fmt, median } from './support.js';

interface Route {
  name: string;
  path: string;
  contentType: string;
  bodies: Buffer[];
  /** Events the answer acknowledges (throws on anything else). */
  acknowledged(status: number, body: string, sent: number): number;
}

/** NDJSON events of the bench → a Loki push: one stream per request (dataset label), each line the event as JSON, ts in ns. */
function lokiBody(ndjson: Buffer): Buffer {
  const values = ndjson
    .toString('utf8')
    .split('\n')
    .map((line) => {
      const { ts, ...rest } = JSON.parse(line) as { ts: number | string } & Record<string, unknown>;
      const ms = typeof ts === 'number' ? ts : Date.parse(ts);
      return [`${ms}000000`, JSON.stringify(rest)];
    });
  return Buffer.from(JSON.stringify({ streams: [{ stream: { dataset: 'bench-loki', host: 'game-1' }, values }] }));
}

/** The same events as a bulk body, as Filebeat sends them: `create` without `_id`, `@timestamp` an ISO string. */
function bulkBody(ndjson: Buffer): Buffer {
  const lines: string[] = [];
  for (const line of ndjson.toString('utf8').split('\n')) {
    const { ts, ...rest } = JSON.parse(line) as { ts: number | string } & Record<string, unknown>;
    lines.push('{"create":{}}', JSON.stringify({ '@timestamp': new Date(ts).toISOString(), ...rest }));
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

function routes(bodies: Buffer[]): Route[] {
  return [
    {
      name: 'native NDJSON',
      path: '/v1/datasets/bench-native/ingest',
      contentType: 'application/x-ndjson',
      bodies,
      acknowledged: (status, body) => {
        if (status !== 200) throw new Error(`native: ${status} ${body}`);
        return (JSON.parse(body) as { ingested: number }).ingested;
      },
    },
    {
      name: 'Loki JSON',
      path: '/v1/loki/api/v1/push',
      contentType: 'application/json',
      bodies: bodies.map(lokiBody),
      acknowledged: (status, body, sent) => {
        if (status !== 204) throw new Error(`loki: ${status} ${body}`);
        return sent;
      },
    },
    {
      name: 'Elasticsearch bulk',
      path: '/v1/elastic/bench-es/_bulk',
      contentType: 'application/x-ndjson',
      bodies: bodies.map(bulkBody),
      acknowledged: (status, body, sent) => {
        if (status !== 200 || (JSON.parse(body) as { errors: boolean }).errors) throw new Error(`bulk: ${status} ${body.slice(0, 500)}`);
        return sent;
      },
    },
  ];
}

/** CPU seconds (user + system, all threads) of a process so far (Linux; NaN elsewhere). */
function cpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

interface RoundResult {
  eventsPerSecond: number;
  /** The server's CPU per acknowledged event, µs: the figure the machine's load disturbs least. */
  cpuPerEvent: number;
}

async function round(apiUrl: string, pid: number, token: string, route: Route, clients: number, perRequest: number, ms: number): Promise<RoundResult> {
  const url = new URL(apiUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const post = (payload: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        { host: url.hostname, port: url.port, path: route.path, method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': route.contentType, 'content-length': payload.length } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => {
            try {
              resolve(route.acknowledged(response.statusCode ?? 0, Buffer.concat(chunks).toString(), perRequest));
            } catch (error) {
              reject(error as Error);
            }
          });
        },
      );
      request.on('error', reject);
      request.end(payload);
    });
  let events = 0;
  const cpuBefore = cpuSeconds(pid);
  const started = performance.now();
  const deadline = started + ms;
  try {
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = c; performance.now() < deadline; i++) events += await post(route.bodies[i % route.bodies.length]!);
      }),
    );
  } finally {
    agent.destroy();
  }
  return { eventsPerSecond: events / ((performance.now() - started) / 1000), cpuPerEvent: ((cpuSeconds(pid) - cpuBefore) / events) * 1e6 };
}

/**
 * Rounds of `seconds` each, native → Loki → bulk, `rounds` times (after one short warm-up round
 * of each); prints events/s per route (median of its rounds, and every round) and its ratio to
 * native's median, against the goal of ≥ 80%.
 */
export async function benchRoutes(
  apiUrl: string,
  pid: number,
  token: string,
  bodies: Buffer[],
  options: { clients: number; perRequest: number; seconds: number; rounds: number },
): Promise<void> {
  // BENCH_ROUTE_NAMES=native,loki,bulk (any of them) picks routes; native is always measured, the ratios need it.
  const picked = (process.env.BENCH_ROUTE_NAMES ?? 'native,loki,bulk').split(',');
  const all = routes(bodies).filter((r, i) => i === 0 || picked.includes(['native', 'loki', 'bulk'][i]!));
  const results = new Map<string, RoundResult[]>(all.map((r) => [r.name, []]));
  for (const route of all) await round(apiUrl, pid, token, route, options.clients, options.perRequest, 1_000);
  for (let r = 0; r < options.rounds; r++) {
    for (const route of all) results.get(route.name)!.push(await round(apiUrl, pid, token, route, options.clients, options.perRequest, options.seconds * 1000));
  }
  const nativeRate = median(results.get('native NDJSON')!.map((r) => r.eventsPerSecond));
  const nativeCpu = median(results.get('native NDJSON')!.map((r) => r.cpuPerEvent));
  console.log(`ingest routes side by side (same server, same events, ${options.clients} clients, ${options.perRequest} events/request, ${options.rounds} alternating rounds of ${options.seconds} s; medians)`);
  for (const [name, rounds] of results) {
    const rate = median(rounds.map((r) => r.eventsPerSecond));
    const cpu = median(rounds.map((r) => r.cpuPerEvent));
    const ratio = name === 'native NDJSON' ? '' : `   ${fmt((100 * rate) / nativeRate)}% of native's events/s (goal ≥ 80%); CPU ÷ native's ${fmt(cpu / nativeCpu, 2)}`;
    console.log(`  ${name.padEnd(20)} ${fmt(rate).padStart(8)} events/s, ${fmt(cpu, 2)} µs server CPU/event  (rounds ${rounds.map((v) => fmt(v.eventsPerSecond)).join(', ')})${ratio}`);
  }
}
