// The ClickHouse side of the events benches (bench:query, bench:ingest, bench:tail): where the
// cluster is, a database of its own per bench run (dropped at the end), direct SQL on each host,
// the events generator of bench:query, and the CPU time of the ClickHouse servers.
//
// Which ClickHouse: OPS_BENCH_CLICKHOUSE_URL, else OPS_TEST_CLICKHOUSE_URL, else the cluster of
// scripts/clickhouse.sh when `scripts/clickhouse.sh status` succeeds (its `env` URL). Without
// any, or when a host does not answer, each bench prints one line saying why it skipped ClickHouse.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { parseClickHouseUrl } from '../src/config/clickhouse-url.js';
import { dropClickHouseDatabase } from '../src/test-support/engine/clickhouse-testing.js';
import type { ClickHouseEngine } from '../src/engine/clickhouse/clickhouse-engine.js';

export { dropClickHouseDatabase };

export type ClickHouseFound = { base: string; version: string; hosts: string[]; source: string } | { skipped: string };

const quiet = { level: 127 as never };

/** Finds the ClickHouse to bench against (see the top of this file), checking that every host answers. */
export async function findClickHouse(): Promise<ClickHouseFound> {
  let base = process.env.OPS_BENCH_CLICKHOUSE_URL || process.env.OPS_TEST_CLICKHOUSE_URL;
  let source = process.env.OPS_BENCH_CLICKHOUSE_URL ? 'OPS_BENCH_CLICKHOUSE_URL' : 'OPS_TEST_CLICKHOUSE_URL';
  if (!base) {
    const status = spawnSync('scripts/clickhouse.sh', ['status'], { stdio: 'ignore', timeout: 15_000 });
    if (status.status !== 0) {
      return { skipped: 'neither OPS_BENCH_CLICKHOUSE_URL nor OPS_TEST_CLICKHOUSE_URL is set, and `scripts/clickhouse.sh status` says the local cluster is not running (scripts/clickhouse.sh start)' };
    }
    const env = spawnSync('scripts/clickhouse.sh', ['env'], { encoding: 'utf8', timeout: 15_000 });
    base = /OPS_TEST_CLICKHOUSE_URL='([^']+)'/.exec(env.stdout ?? '')?.[1];
    if (!base) return { skipped: '`scripts/clickhouse.sh env` printed no OPS_TEST_CLICKHOUSE_URL' };
    source = 'scripts/clickhouse.sh env';
  }
  let hosts: string[];
  try {
    hosts = parseClickHouseUrl(base).hosts;
  } catch (error) {
    return { skipped: `${source} is not a ClickHouse URL: ${(error as Error).message}` };
  }
  let version = '';
  for (const host of hosts) {
    const client = clientFor(base, host);
    try {
      const [row] = await select<{ v: string }>(client, 'SELECT version() AS v');
      version = row?.v ?? '?';
    } catch (error) {
      return { skipped: `ClickHouse at ${host} (${source}) does not answer: ${(error as Error).message}` };
    } finally {
      await client.close();
    }
  }
  return { base, version, hosts, source };
}

/** The base URL with a database of this bench run's own in its path (like clickhouse-testing.ts's freshClickHouseUrl). */
export function benchDatabaseUrl(base: string, bench: string): string {
  const name = `ops_bench_${bench}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  return base.replace(/^(clickhouse:\/\/[^/]+\/)[^?#]*/, `$1${name}`);
}

function clientFor(url: string, host: string): ClickHouseClient {
  const target = parseClickHouseUrl(url);
  return createClient({
    url: host,
    username: target.username,
    password: target.password,
    database: 'default',
    request_timeout: 600_000,
    compression: { request: false, response: false },
    log: quiet,
  });
}

async function select<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  const result = await client.query({ query, format: 'JSONEachRow' });
  return result.json<T>();
}

/** Direct SQL on every host of a URL (shard order), for what the API does not show. */
export class ClickHouseHosts {
  readonly clients: ClickHouseClient[];
  readonly database: string;
  readonly cluster: string | undefined;

  constructor(readonly url: string) {
    const target = parseClickHouseUrl(url);
    this.database = target.database;
    this.cluster = target.cluster;
    this.clients = target.hosts.map((host) => clientFor(url, host));
  }

  /** The MergeTree table holding each host's rows (clickhouse-schema.ts). */
  get localTable(): string {
    return `${this.database}.${this.cluster ? 'events_local' : 'events'}`;
  }

  select<T>(host: number, query: string): Promise<T[]> {
    return select<T>(this.clients[host]!, query);
  }

  command(host: number, query: string): Promise<unknown> {
    return this.clients[host]!.command({ query });
  }

  /** count() of the events through the Distributed (or only) table. */
  async count(): Promise<number> {
    const [row] = await this.select<{ n: string }>(0, `SELECT count() AS n FROM ${this.database}.events`);
    return Number(row?.n ?? 0);
  }

  /** Active parts and their bytes on disk of the events' MergeTree table, over every host. */
  async parts(): Promise<{ parts: number; bytes: number; rows: number }> {
    let parts = 0;
    let bytes = 0;
    let rows = 0;
    const table = this.cluster ? 'events_local' : 'events';
    for (let h = 0; h < this.clients.length; h++) {
      const [row] = await this.select<{ p: string; b: string; r: string }>(
        h,
        `SELECT count() AS p, sum(bytes_on_disk) AS b, sum(rows) AS r FROM system.parts WHERE database = '${this.database}' AND table = '${table}' AND active`,
      );
      parts += Number(row?.p ?? 0);
      bytes += Number(row?.b ?? 0);
      rows += Number(row?.r ?? 0);
    }
    return { parts, bytes, rows };
  }

  /** Waits until no host merges parts of this database (at most `maxMs`); the time it took. */
  async waitForMerges(maxMs = 300_000): Promise<number> {
    const started = performance.now();
    let quietSince: number | undefined;
    while (performance.now() - started < maxMs) {
      let merging = 0;
      for (let h = 0; h < this.clients.length; h++) {
        const [row] = await this.select<{ n: string }>(h, `SELECT count() AS n FROM system.merges WHERE database = '${this.database}'`);
        merging += Number(row?.n ?? 0);
      }
      if (merging === 0) {
        quietSince ??= performance.now();
        // A merge is picked a moment after the insert that makes it worth doing.
        if (performance.now() - quietSince > 3_000) break;
      } else quietSince = undefined;
      await new Promise((r) => setTimeout(r, 500));
    }
    return performance.now() - started;
  }

  close(): Promise<unknown> {
    return Promise.all(this.clients.map((c) => c.close()));
  }
}

/**
 * Generates the events of bench:query's DuckDB generator straight into ClickHouse: for each i of
 * [from, to), the same tenant (every 10th the other), dataset (i % 3), ts spacing (60 ms, or `spacingMs`),
 * severity (a hash of i, mod 5), event, actor, source, message and payload
 * `{"map":…,"ping":(i*7919)%400,"round":i%30}`, with the payload's flattened columns as
 * payload-paths.ts's flattenPayload writes them. Each host inserts into its MergeTree table the
 * rows whose tenant the Distributed table's sharding key (cityHash64(tenant), equal weights)
 * sends to it, all hosts at once. `seq` is 0 on every generated row: the engine asks, when it
 * opens, for the rows past its loaded position (the API's seed events, seq 1–3), and generated
 * rows must not look like a half-landed load.
 */
export async function generateEvents(
  hosts: ClickHouseHosts,
  options: {
    from: number;
    to: number;
    tenantKey: string;
    otherKey: string;
    datasetIds: readonly string[];
    base: number;
    spacingMs?: number;
    /** A fourth payload key, `player_id` ("p_" and 10 digits, 50,000 players), as bench:monitors' realistic events carry. */
    playerIds?: boolean;
  },
): Promise<void> {
  const q = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const [d0, d1, d2] = options.datasetIds.map(q);
  const shards = hosts.clients.length;
  const step = 2_000_000;
  /** ms between events: 60 (bench:query's), or bench:monitors' 24 h over the count */
  const spacing = options.spacingMs ?? 60;
  for (let from = options.from; from < options.to; from += step) {
    const count = Math.min(options.to, from + step) - from;
    await Promise.all(
      hosts.clients.map((_, h) =>
        hosts.command(
          h,
          `INSERT INTO ${hosts.localTable} (tenant, dataset_id, ts, event_id, seq, ingested_at, severity, event, actor, source, message, payload, bytes_raw,
             payload_paths, payload_types, payload_text, payload_numbers, payload_json)
           SELECT tenant, dataset_id, ts, event_id, seq, ingested_at, severity, event, actor, source, message,
             ${
               options.playerIds
                 ? `concat('{"map":"', map, '","ping":', toString(ping), ',"round":', toString(round), ',"player_id":"', player_id, '"}') AS payload, bytes_raw,
             ['/map', '/ping', '/round', '/player_id'], [toUInt8(1), toUInt8(2), toUInt8(2), toUInt8(1)], [map, '', '', player_id],
             [toFloat64(0), toFloat64(ping), toFloat64(round), toFloat64(0)], [concat('"', map, '"'), toString(ping), toString(round), concat('"', player_id, '"')]`
                 : `concat('{"map":"', map, '","ping":', toString(ping), ',"round":', toString(round), '}') AS payload, bytes_raw,
             ['/map', '/ping', '/round'], [toUInt8(1), toUInt8(2), toUInt8(2)], [map, '', ''],
             [toFloat64(0), toFloat64(ping), toFloat64(round)], [concat('"', map, '"'), toString(ping), toString(round)]`
             }
           FROM (
             SELECT number AS i,
               if(i % 10 = 9, ${q(options.otherKey)}, ${q(options.tenantKey)}) AS tenant,
               [${d0}, ${d1}, ${d2}][i % 3 + 1] AS dataset_id,
               toInt64(${options.base} + floor(i * ${spacing})) AS ts,
               toString(generateUUIDv4()) AS event_id,
               toUInt64(0) AS seq,
               toInt64(${options.base} + floor(i * ${spacing}) + 5) AS ingested_at,
               toUInt8(cityHash64(i) % 5) AS severity,
               concat('evt.', toString(i % 50)) AS event,
               if(i % 7 = 0, NULL, concat('player-', toString(i % 10000))) AS actor,
               concat('srv-', toString(i % 20)) AS source,
               concat('message number ', toString(i)) AS message,
               ['dust', 'nuke', 'inferno', 'mirage', 'vertigo'][i % 5 + 1] AS map,
               (i * 7919) % 400 AS ping,
               i % 30 AS round,
               concat('p_', substring(concat('0000000000', toString((i * 7919) % 50000)), length(toString((i * 7919) % 50000)) + 1, 10)) AS player_id,
               toInt32(200) AS bytes_raw
             FROM numbers(${from}, ${count})
             WHERE cityHash64(tenant) % ${shards} = ${h}
           )`,
        ),
      ),
    );
  }
}

/** Every statement an engine sends while `work` runs, with its time (the engine's clients, wrapped). */
export async function traceStatements(engine: ClickHouseEngine, work: () => Promise<unknown>): Promise<Array<{ sql: string; ms: number }>> {
  const clients = (engine as unknown as { clients: ClickHouseClient[] }).clients;
  const trace: Array<{ sql: string; ms: number }> = [];
  const originals = clients.map((c) => c.query.bind(c));
  clients.forEach((client, i) => {
    client.query = (async (params: Parameters<ClickHouseClient['query']>[0]) => {
      const t = performance.now();
      const result = await originals[i]!(params);
      // The rows are read by the caller: time the statement including its body.
      const text = await result.text();
      trace.push({ sql: params.query, ms: performance.now() - t });
      return { ...result, json: async () => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown), text: async () => text };
    }) as ClickHouseClient['query'];
  });
  try {
    await work();
  } finally {
    clients.forEach((client, i) => (client.query = originals[i]! as ClickHouseClient['query']));
  }
  return trace;
}

/** The pids of the local cluster's servers (scripts/clickhouse.sh's pid files), when this machine runs it. */
export function clickHouseServerPids(): number[] {
  const dir = process.env.OPS_CLICKHOUSE_DIR || '/tmp/opsplatform-clickhouse';
  const pids: number[] = [];
  for (const node of ['node1', 'node2']) {
    try {
      const pid = Number(fs.readFileSync(path.join(dir, node, 'server.pid'), 'utf8').trim());
      if (pid > 0 && fs.existsSync(`/proc/${pid}/stat`)) pids.push(pid);
    } catch {
      // not this machine's cluster
    }
  }
  return pids;
}

/** User + system CPU seconds a process has used (Linux /proc; NaN when unreadable). */
export function processCpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds of several processes together. */
export const cpuSecondsOf = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
