import path from 'node:path';
import { parseClickHouseUrl } from './clickhouse-url.js';
import { parseDnsServers } from './dns-servers.js';

/**
 * Configuration is read once, from the environment, at start-up, and passed down.
 * A bad value stops the process with a message naming the variable.
 */
export interface Config {
  port: number;
  cdnPort: number;
  host: string;
  /** Address written into responses as {base_url}, without the /v1 segment. */
  publicUrl: string;
  /** Address written into delivery URLs as {cdn_url}. */
  cdnUrl: string;
  dataDir: string;
  /** Undefined means the embedded SQLite store under dataDir. */
  databaseUrl: string | undefined;
  /** Undefined means the file-system blob store under dataDir. */
  blobUrl: string | undefined;
  /** Undefined means: generate one into dataDir on first start. */
  secretKey: string | undefined;
  plansFile: string | undefined;
  corsOrigins: string[];
  features: Set<'logs' | 'cases' | 'apps'>;
  logLevel: string;
  tailHeartbeatMs: number;
  tailIdleTimeoutMs: number;
  tailPollMs: number;
  schemaCacheTtlMs: number;
  purgeIntervalMs: number;
  /** The events engine's write-ahead log and loader (src/engine/logged-event-store.ts). */
  events: {
    /** A read waits at most this long for the loader to reach the events acknowledged before it (then 503). */
    readWaitMs: number;
    /** Log segment size: past it a new segment starts (loaded segments are deleted). */
    segmentBytes: number;
    /** Events per load transaction. */
    loadBatchEvents: number;
    /**
     * OPS_EVENTS_LOAD_INTERVAL_MS: a load starts at most this often (default 100) unless a read
     * waits for it or it would be full, so each transaction carries more events (engine/wal/wal-loader.ts).
     */
    loadIntervalMs: number;
    /**
     * OPS_EVENTS_THREADS: DuckDB's `threads` (default 2). The setting is the instance's, not a
     * connection's (DuckDB 1.5 refuses it per session), so it sizes the API's reads and the
     * monitors' alike: with 1 each statement runs on its caller's thread only, and an
     * evaluation's scan never takes a second core from an API read (docs/monitors.md "Beside the API").
     */
    threads: number;
  };
  /**
   * Where the events engine runs. Undefined: in this process (embedded DuckDB behind the
   * write-ahead log under dataDir). An http:// URL: an events node (`opsctl events-node`) that
   * every API process shares (src/engine/node/).
   */
  eventsUrl: string | undefined;
  /** OPS_EVENTS_URL when it is clickhouse://: this process owns the log, events live in ClickHouse. */
  eventsClickHouseUrl: string | undefined;
  /**
   * Which worker of `opsctl serve --workers N` this process is (0…N-1; OPS_WORKER_INDEX, set by
   * the primary for each worker it starts, the same for a worker that replaces a dead one).
   * Undefined outside `--workers`. On ClickHouse each worker is an ingester with a write-ahead
   * log of its own: worker 0 in OPS_DATA_DIR/events, worker i in OPS_DATA_DIR/events-i.
   */
  workerIndex: number | undefined;
  /**
   * OPS_EVENTS_CHANGE_BOARD, set by `serve --workers` for its workers when the primary runs the
   * events node: the node's change board file (src/engine/change-board.ts), read to serve query
   * pages and dataset counts again while a tenant's events are unchanged. Not for operators.
   */
  eventsChangeBoard: string | undefined;
  /** Address an events node listens on (`opsctl events-node`): OPS_EVENTS_NODE_HOST / _PORT. */
  eventsNode: { host: string; port: number };
  /** Redis for limits shared by every API process (OPS_REDIS_URL); undefined: per process. */
  redisUrl: string | undefined;
  /** NATS for messages between API processes: tail wake-ups, token revocations (OPS_NATS_URL). */
  natsUrl: string | undefined;
  /** Requests per second per token, and the burst allowed above it. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** How long a looked-up token is trusted before the database is asked again. */
  authCacheMs: number;
  /** Both listeners (src/http/server-limits.ts): time allowed for a request's line and headers. */
  headersTimeoutMs: number;
  /** Time allowed to receive a whole request, body included; 0 for none. */
  requestTimeoutMs: number;
  /** A connection with nothing received or sent for this long mid-request is closed; 0 for never. */
  idleTimeoutMs: number;
  /** How long a kept-alive connection may wait for its next request. */
  keepAliveTimeoutMs: number;
  /** Open connections per listener; more are closed as soon as they are accepted. */
  maxConnections: number;
  /**
   * OPS_OUTBOUND_ALLOW_PRIVATE (formerly OPS_WEBHOOK_ALLOW_PRIVATE, still read): every outbound
   * call made for a tenant — notification channels, single sign-on's identity providers — may
   * reach loopback, private, link-local and metadata addresses (tests, private installations);
   * refused otherwise (src/outbound). The only switch of that policy.
   */
  outboundAllowPrivate: boolean;
  /**
   * Threshold monitors one process evaluates at a time (OPS_MONITOR_CONCURRENCY): 4 when the
   * events are in ClickHouse (an evaluation mostly waits for it), 1 on the embedded engine (its
   * queries already use the machine's cores, which the API needs too).
   */
  monitorConcurrency: number;
  /**
   * OPS_MONITOR_WINDOW_COUNTS: a threshold monitor's `count()`, `sum` or `avg` over a window of
   * 15 minutes or more goes on from its last answer (src/monitors/window-counts.ts) instead of
   * reading the window whole each time. On by default; off reads every window whole (the same answers: the switch
   * is there to compare, and to rule it out).
   */
  monitorWindowCounts: boolean;
  /**
   * OPS_HOT_KEYS_AUTO: each dataset's frequent payload keys are made hot (typed
   * columns) on their own, in the background (src/events/hot-key-chooser.ts) and when someone asks
   * for its schema. On by default; `false` leaves only the pinned keys (PATCH /datasets/{name}
   * hot_keys) hot.
   */
  hotKeysAuto: boolean;
  /**
   * OPS_HOT_KEYS_INTERVAL_MS: how often the background task of a process that loads events
   * looks at the datasets it loaded (src/events/hot-key-chooser.ts): it chooses their hot keys
   * (OPS_HOT_KEYS_AUTO), hands the metadata's keys to its engine, and starts the filling of the
   * columns of rows loaded before a key was hot. A dataset's keys are chosen within two
   * intervals of its first events.
   */
  hotKeysIntervalMs: number;
  /**
   * OPS_DNS_SERVERS: the resolvers (`ip[:port]`) of the DNS look-ups the server makes itself:
   * the TXT records that verify an SSO e-mail domain (src/sso/domain-dns.ts). Empty: the system's.
   */
  dnsServers: string[];
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `expected a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `unsupported scheme "${parsed.protocol}", expected one of ${protocols.join(', ')}`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * OPS_EVENTS_URL: http://… is an events node (eventsUrl); clickhouse://… keeps the events
 * store in this process with its events in ClickHouse (eventsClickHouseUrl), checked here so a
 * mistake stops start-up with the variable's name.
 */
function eventsTarget(env: Env): { eventsUrl: string | undefined; eventsClickHouseUrl: string | undefined } {
  const raw = env.OPS_EVENTS_URL;
  if (raw && /^clickhouse:/i.test(raw)) {
    try {
      parseClickHouseUrl(raw);
    } catch (error) {
      throw new ConfigError('OPS_EVENTS_URL', (error as Error).message);
    }
    return { eventsUrl: undefined, eventsClickHouseUrl: raw.trim() };
  }
  return { eventsUrl: url(env, 'OPS_EVENTS_URL', ['http:', 'clickhouse:']), eventsClickHouseUrl: undefined };
}

function blobUrl(env: Env): string | undefined {
  return url(env, 'OPS_BLOB_URL', ['file:', 's3:']);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `expected true or false, got "${env[name]}"`);
}

/**
 * OPS_OUTBOUND_ALLOW_PRIVATE, or its former name OPS_WEBHOOK_ALLOW_PRIVATE (from when only
 * notifications called out): both set and saying different things stops the start, rather than
 * one silently winning over the other.
 */
function outboundAllowPrivate(env: Env): boolean {
  const name = 'OPS_OUTBOUND_ALLOW_PRIVATE';
  const alias = 'OPS_WEBHOOK_ALLOW_PRIVATE';
  const given = (variable: string) => (env[variable]?.trim() ?? '') !== '';
  const value = boolean(env, name, false);
  const aliased = boolean(env, alias, false);
  if (given(name) && given(alias) && value !== aliased) {
    throw new ConfigError(name, `is "${env[name]}" but ${alias} (its former name) is "${env[alias]}": set only ${name}`);
  }
  return given(name) ? value : aliased;
}

const knownFeatures = ['logs', 'cases', 'apps'] as const;

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'OPS_PORT', 8080, 0, 65535);
  const cdnPort = integer(env, 'OPS_CDN_PORT', 8081, 0, 65535);
  // Under `serve --workers` the cluster shares one listening socket per port, so the same port
  // twice would not fail to bind: the API and the delivery server would take turns answering.
  if (cdnPort !== 0 && cdnPort === port) throw new ConfigError('OPS_CDN_PORT', `must differ from OPS_PORT (both are ${port})`);
  const host = env.OPS_HOST || '0.0.0.0';
  const features = new Set<'logs' | 'cases' | 'apps'>();
  for (const item of (env.OPS_FEATURES ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const known = knownFeatures.find((f) => f === item);
    if (!known) throw new ConfigError('OPS_FEATURES', `unknown feature "${item}", expected a comma list of ${knownFeatures.join(', ')}`);
    features.add(known);
  }
  const secretKey = env.OPS_SECRET_KEY || undefined;
  if (secretKey !== undefined && secretKey.length < 32) {
    throw new ConfigError('OPS_SECRET_KEY', 'must be at least 32 characters');
  }
  const logLevel = env.OPS_LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('OPS_LOG_LEVEL', `unknown level "${logLevel}"`);
  }
  const tailHeartbeatMs = integer(env, 'OPS_TAIL_HEARTBEAT_MS', 15_000, 10, 3_600_000);
  return {
    port,
    cdnPort,
    host,
    // Empty when the port is chosen at bind time (0): the server fills in the bound address.
    publicUrl: url(env, 'OPS_PUBLIC_URL', ['http:', 'https:']) ?? (port === 0 ? '' : `http://localhost:${port}`),
    cdnUrl: url(env, 'OPS_CDN_URL', ['http:', 'https:']) ?? (cdnPort === 0 ? '' : `http://localhost:${cdnPort}`),
    dataDir: path.resolve(env.OPS_DATA_DIR || './data'),
    workerIndex: env.OPS_WORKER_INDEX ? integer(env, 'OPS_WORKER_INDEX', 0, 0, 1023) : undefined,
    eventsChangeBoard: env.OPS_EVENTS_CHANGE_BOARD || undefined,
    databaseUrl: url(env, 'OPS_DATABASE_URL', ['postgres:', 'postgresql:']),
    blobUrl: blobUrl(env),
    secretKey,
    plansFile: env.OPS_PLANS_FILE || undefined,
    corsOrigins: (env.OPS_CORS_ORIGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    features,
    logLevel,
    tailHeartbeatMs,
    tailIdleTimeoutMs: integer(env, 'OPS_TAIL_IDLE_TIMEOUT_MS', 300_000, 10, 86_400_000),
    tailPollMs: integer(env, 'OPS_TAIL_POLL_MS', 1_000, 5, 60_000),
    schemaCacheTtlMs: integer(env, 'OPS_SCHEMA_CACHE_TTL_MS', 300_000, 0, 86_400_000),
    purgeIntervalMs: integer(env, 'OPS_PURGE_INTERVAL_MS', 86_400_000, 1_000, 31 * 86_400_000),
    events: {
      readWaitMs: integer(env, 'OPS_EVENTS_READ_WAIT_MS', 10_000, 1, 600_000),
      segmentBytes: integer(env, 'OPS_EVENTS_SEGMENT_BYTES', 64 * 1024 * 1024, 4096, 1024 * 1024 * 1024),
      loadBatchEvents: integer(env, 'OPS_EVENTS_LOAD_BATCH', 50_000, 1, 1_000_000),
      loadIntervalMs: integer(env, 'OPS_EVENTS_LOAD_INTERVAL_MS', 100, 0, 10_000),
      threads: integer(env, 'OPS_EVENTS_THREADS', 2, 1, 64),
    },
    ...eventsTarget(env),
    eventsNode: { host: env.OPS_EVENTS_NODE_HOST || '127.0.0.1', port: integer(env, 'OPS_EVENTS_NODE_PORT', 8090, 0, 65535) },
    redisUrl: url(env, 'OPS_REDIS_URL', ['redis:', 'rediss:']),
    natsUrl: url(env, 'OPS_NATS_URL', ['nats:', 'tls:']),
    rateLimitPerSecond: integer(env, 'OPS_RATE_LIMIT_PER_SECOND', 50, 1, 1_000_000),
    rateLimitBurst: integer(env, 'OPS_RATE_LIMIT_BURST', 200, 1, 10_000_000),
    authCacheMs: integer(env, 'OPS_AUTH_CACHE_MS', 1_000, 0, 60_000),
    ...connectionLimits(env, tailHeartbeatMs),
    outboundAllowPrivate: outboundAllowPrivate(env),
    hotKeysAuto: boolean(env, 'OPS_HOT_KEYS_AUTO', true),
    hotKeysIntervalMs: integer(env, 'OPS_HOT_KEYS_INTERVAL_MS', 60_000, 100, 86_400_000),
    monitorConcurrency: integer(env, 'OPS_MONITOR_CONCURRENCY', eventsTarget(env).eventsClickHouseUrl ? 4 : 1, 1, 32),
    monitorWindowCounts: boolean(env, 'OPS_MONITOR_WINDOW_COUNTS', true),
    dnsServers: parseDnsServers(env.OPS_DNS_SERVERS, (message) => new ConfigError('OPS_DNS_SERVERS', message)),
  };
}

type ConnectionLimits = Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'idleTimeoutMs' | 'keepAliveTimeoutMs' | 'maxConnections'>;

/**
 * Timeouts and the connection bound of both listeners. The idle timeout is what frees a
 * stalled upload (a whole-request timeout long enough for a slow 500 MB upload is no help);
 * live tail streams stay open by writing a heartbeat, so it must leave room for two of them.
 */
function connectionLimits(env: Env, tailHeartbeatMs: number): ConnectionLimits {
  const requestTimeoutMs = integer(env, 'OPS_REQUEST_TIMEOUT_MS', 3_600_000, 0, 86_400_000);
  const headersTimeoutMs = integer(env, 'OPS_HEADERS_TIMEOUT_MS', 30_000, 10, 3_600_000);
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError('OPS_HEADERS_TIMEOUT_MS', `must not exceed OPS_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${headersTimeoutMs}`);
  }
  const idleTimeoutMs = integer(env, 'OPS_IDLE_TIMEOUT_MS', Math.max(60_000, 2 * tailHeartbeatMs), 0, 86_400_000);
  if (idleTimeoutMs > 0 && idleTimeoutMs < 2 * tailHeartbeatMs) {
    throw new ConfigError(
      'OPS_IDLE_TIMEOUT_MS',
      `must be 0 or at least twice OPS_TAIL_HEARTBEAT_MS (${tailHeartbeatMs}), or live tail streams would be cut between heartbeats; got ${idleTimeoutMs}`,
    );
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    idleTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'OPS_KEEPALIVE_TIMEOUT_MS', 72_000, 10, 3_600_000),
    maxConnections: integer(env, 'OPS_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
  };
}
