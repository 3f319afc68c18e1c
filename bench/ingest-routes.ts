// The shipper routes (Loki JSON, Loki protobuf + snappy, Elasticsearch bulk) beside native NDJSON: the same events, the same clients, one
// server, rounds alternating between the routes so the machine's load falls on each alike.
// Used by bench/ingest.ts (`npm run bench:ingest`; BENCH_ROUTES=0 leaves it out).
import fs from 'node:fs';
import http from 'node:http';
import snappy from 'snappy';
import { PushRequest } from '../src/ingest/loki/push-proto.js';
import { fmt, median } from './support.js';

export interface Route {
  /** Its name in BENCH_ROUTE_NAMES. */
  key: string;
  name: string;
  path: string;
  contentType: string;
  bodies: Buffer[];
  /** Events the answer acknowledges (throws on anything else). */
  acknowledged(status: number, body: string, sent: number): number;
  /**
   * Read only the answer's first bytes (at least this many): the bulk answer is ~185 KB per
   * 1,000 events, and parsing it all cost this process ~1 µs per event, on the two cores the
   * server uses (a shipper pays that on its own machine). Its head says `"errors":false`.
   */
  answerHead?: number;
}

/** An NDJSON line's `ts` (epoch ms or ISO), as a shipper puts it beside the line. */
const tsOf = (line: string): number => {
  const { ts } = JSON.parse(line) as { ts: number | string };
  return typeof ts === 'number' ? ts : Date.parse(ts);
};

/**
 * NDJSON events of the bench → a Loki push: one stream per request (dataset label and a `host`
 * label), each line the native line as it is (DECISIONS §21 maps it as native ingest does), its
 * ts also the entry's timestamp in ns, as Promtail sends a JSON log line.
 */
function lokiBody(ndjson: Buffer): Buffer {
  const values = ndjson
    .toString('utf8')
    .split('\n')
    .map((line) => [`${tsOf(line)}000000`, line]);
  return Buffer.from(JSON.stringify({ streams: [{ stream: { dataset: 'bench-loki', host: 'game-1' }, values }] }));
}

/** The same push as Promtail and Alloy send it: a logproto.PushRequest, snappy-compressed, the labels in label syntax. */
function lokiProtobufBody(ndjson: Buffer): Buffer {
  const entries = ndjson
    .toString('utf8')
    .split('\n')
    .map((line) => {
      const ms = tsOf(line);
      return { timestamp: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 }, line };
    });
  const message = PushRequest.fromObject({ streams: [{ labels: '{dataset="bench-loki-proto", host="game-1"}', entries }] });
  return snappy.compressSync(Buffer.from(PushRequest.encode(message).finish()));
}

/** The same events as a bulk body, as Filebeat sends a JSON log line: `create` without `_id`, the line as the document. */
function bulkBody(ndjson: Buffer): Buffer {
  const lines: string[] = [];
  for (const line of ndjson.toString('utf8').split('\n')) lines.push('{"create":{}}', line);
  return Buffer.from(`${lines.join('\n')}\n`);
}

/**
 * The control: native NDJSON carrying the events as the Loki routes store them, the stream's
 * labels in `payload.labels`. Its difference to native is what storing the labels costs; the
 * rest of a Loki route's difference is the route's own work.
 */
function storedShapeBody(ndjson: Buffer): Buffer {
  const lines: string[] = [];
  for (const line of ndjson.toString('utf8').split('\n')) {
    const event = JSON.parse(line) as { payload?: Record<string, unknown> };
    lines.push(JSON.stringify({ ...event, payload: { ...event.payload, labels: { host: 'game-1' } } }));
  }
  return Buffer.from(lines.join('\n'));
}

/** The bench's NDJSON bodies as each route's requests (bench/shipper-parse.ts uses them too). */
export function routeBodies(bodies: Buffer[]) {
  return { native: bodies, storedShape: bodies.map(storedShapeBody), loki: bodies.map(lokiBody), lokiProtobuf: bodies.map(lokiProtobufBody), bulk: bodies.map(bulkBody) };
}

function nativeAcknowledged(status: number, body: string): number {
  if (status !== 200) throw new Error(`native: ${status} ${body}`);
  return (JSON.parse(body) as { ingested: number }).ingested;
}

function routes(ndjson: Buffer[]): Route[] {
  const bodies = routeBodies(ndjson);
  return [
    {
      key: 'native',
      name: 'native NDJSON',
      path: '/v1/datasets/bench-native/ingest',
      contentType: 'application/x-ndjson',
      bodies: bodies.native,
      acknowledged: nativeAcknowledged,
    },
    {
      key: 'stored',
      name: "native, Loki's labels",
      path: '/v1/datasets/bench-stored/ingest',
      contentType: 'application/x-ndjson',
      bodies: bodies.storedShape,
      acknowledged: nativeAcknowledged,
    },
    {
      key: 'loki',
      name: 'Loki JSON',
      path: '/v1/loki/api/v1/push',
      contentType: 'application/json',
      bodies: bodies.loki,
      acknowledged: (status, body, sent) => {
        if (status !== 204) throw new Error(`loki: ${status} ${body}`);
        return sent;
      },
    },
    {
      key: 'loki-proto',
      name: 'Loki protobuf',
      path: '/v1/loki/api/v1/push',
      contentType: 'application/x-protobuf',
      bodies: bodies.lokiProtobuf,
      acknowledged: (status, body, sent) => {
        if (status !== 204) throw new Error(`loki protobuf: ${status} ${body}`);
        return sent;
      },
    },
    {
      key: 'bulk',
      name: 'Elasticsearch bulk',
      path: '/v1/elastic/bench-es/_bulk',
      contentType: 'application/x-ndjson',
      bodies: bodies.bulk,
      // `{"took":…,"errors":false,"items":[…]}`: Elasticsearch's order, which ours keeps (answers.ts).
      answerHead: 64,
      acknowledged: (status, body, sent) => {
        if (status !== 200 || !/^\{"took":\d+,"errors":false,/.test(body)) throw new Error(`bulk: ${status} ${body.slice(0, 500)}`);
        return sent;
      },
    },
  ];
}

/** CPU seconds (user + system) so far of a process (all threads), or of one thread with `tid` (Linux; NaN elsewhere). */
function cpuSeconds(pid: number, tid?: number): number {
  try {
    const fields = fs.readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** The thread id of the server's events worker (the WAL loader and DuckDB's appends run there; named by its Worker), or undefined. */
function eventsWorkerTid(pid: number): number | undefined {
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      if (fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === 'ops-events') return Number(tid);
    }
  } catch {
    // not Linux
  }
  return undefined;
}

/** CPU seconds of every thread of the server by name (`comm`), the main thread as `main` (Linux; empty elsewhere). */
function threadsByName(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const name = Number(tid) === pid ? 'main' : fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
        out.set(name, (out.get(name) ?? 0) + cpuSeconds(pid, Number(tid)));
      } catch {
        // the thread ended
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

export interface RoundResult {
  eventsPerSecond: number;
  /** The server's CPU per acknowledged event, µs: the figure the machine's load disturbs least. */
  cpuPerEvent: number;
  /** Of which its main thread's (the event loop: HTTP, parsing, mapping; the rest is the store's threads and GC's). */
  mainPerEvent: number;
  /** Of which the events worker's (reading the log back, building DuckDB's chunks, the appender and COMMIT). */
  workerPerEvent: number;
  /** The bench process's own CPU per event (the clients: bodies sent, answers read): it shares the machine's two cores with the server. */
  clientPerEvent: number;
  /** The server's CPU per event by thread name (BENCH_ROUTE_THREADS=1 prints them; a thread that ended in the round is not counted). */
  byThread: Map<string, number>;
}

export async function round(apiUrl: string, pid: number, token: string, route: Route, clients: number, perRequest: number, ms: number): Promise<RoundResult> {
  const url = new URL(apiUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const post = (payload: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        { host: url.hostname, port: url.port, path: route.path, method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': route.contentType, 'content-length': payload.length } },
        (response) => {
          const chunks: Buffer[] = [];
          let read = 0;
          response.on('data', (c: Buffer) => {
            if (route.answerHead !== undefined && read >= route.answerHead) return;
            chunks.push(c);
            read += c.length;
          });
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
  const mainBefore = cpuSeconds(pid, pid);
  const workerTid = eventsWorkerTid(pid);
  const workerBefore = workerTid === undefined ? NaN : cpuSeconds(pid, workerTid);
  const threadsBefore = threadsByName(pid);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + ms;
  try {
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = c; performance.now() < deadline; i++) {
          // Not `events += await …`: that reads `events` before the await, and the clients' sums
          // overwrite each other (each must count its own requests).
          const acknowledged = await post(route.bodies[i % route.bodies.length]!);
          events += acknowledged;
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return {
    eventsPerSecond: events / ((performance.now() - started) / 1000),
    cpuPerEvent: ((cpuSeconds(pid) - cpuBefore) / events) * 1e6,
    mainPerEvent: ((cpuSeconds(pid, pid) - mainBefore) / events) * 1e6,
    workerPerEvent: workerTid === undefined ? NaN : ((cpuSeconds(pid, workerTid) - workerBefore) / events) * 1e6,
    byThread: new Map([...threadsByName(pid)].map(([name, cpu]) => [name, ((cpu - (threadsBefore.get(name) ?? 0)) / events) * 1e6])),
    clientPerEvent: (() => {
      const used = process.cpuUsage(clientBefore);
      return (used.user + used.system) / events;
    })(),
  };
}

/**
 * Rounds of `seconds` each, native → native with Loki's labels → Loki JSON → Loki protobuf →
 * bulk, `rounds` times (after one short warm-up round of each); prints events/s per route (median
 * of its rounds, and every round) and its ratio to native's median, against the goal of ≥ 80%,
 * with the server's CPU per event (all threads, and the main thread's); then a table of each
 * route's events/s beside native's, round by round (a round's neighbours ran under the same load
 * of the machine: their ratio is the steadier figure).
 */
export async function benchRoutes(
  apiUrl: string,
  pid: number,
  token: string,
  bodies: Buffer[],
  options: { clients: number; perRequest: number; seconds: number; rounds: number },
): Promise<void> {
  // BENCH_ROUTE_NAMES=native,stored,loki,loki-proto,bulk (any of them) picks routes; native is always measured, the ratios need it.
  const picked = (process.env.BENCH_ROUTE_NAMES ?? 'native,stored,loki,loki-proto,bulk').split(',');
  const all = routes(bodies).filter((r) => r.key === 'native' || picked.includes(r.key));
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
    const main = median(rounds.map((r) => r.mainPerEvent));
    const worker = median(rounds.map((r) => r.workerPerEvent));
    const client = median(rounds.map((r) => r.clientPerEvent));
    const ratio = name === 'native NDJSON' ? '' : `   ${fmt((100 * rate) / nativeRate)}% of native's events/s (goal ≥ 80%); CPU ÷ native's ${fmt(cpu / nativeCpu, 2)}`;
    console.log(`  ${name.padEnd(24)} ${fmt(rate).padStart(8)} events/s, ${fmt(cpu, 2)} µs server CPU/event (main thread ${fmt(main, 2)}, events worker ${fmt(worker, 2)}; client ${fmt(client, 2)})  (rounds ${rounds.map((v) => fmt(v.eventsPerSecond)).join(', ')})${ratio}`);
    if (process.env.BENCH_ROUTE_THREADS === '1') {
      // By thread name: main; ops-events (the events worker and the DuckDB threads it starts, which inherit its name); libuv's pool; V8's platform threads.
      const names = [...new Set(rounds.flatMap((r) => [...r.byThread.keys()]))].sort();
      console.log(`      by thread (µs/event, median): ${names.map((n) => `${n} ${fmt(median(rounds.map((r) => r.byThread.get(n) ?? 0)), 2)}`).join(', ')}`);
    }
  }
  const nativeRounds = results.get('native NDJSON')!;
  console.log('  each route beside native NDJSON, round by round (events/s route / native = ratio; the median ratio last, goal ≥ 80%)');
  for (const [name, rounds] of results) {
    if (name === 'native NDJSON') continue;
    const ratios = rounds.map((r, i) => r.eventsPerSecond / nativeRounds[i]!.eventsPerSecond);
    const cells = rounds.map((r, i) => `${fmt(r.eventsPerSecond)} / ${fmt(nativeRounds[i]!.eventsPerSecond)} = ${fmt(100 * ratios[i]!)}%`);
    console.log(`    ${name.padEnd(24)} ${cells.join(';  ')}   median ${fmt(100 * median(ratios))}%`);
  }
}
