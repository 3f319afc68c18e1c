/**
 * OPS_EVENTS_URL for ClickHouse:
 *
 *   clickhouse://[user[:password]@]host:port[,host:port…]/database[?cluster=name&timeout_ms=30000]
 *
 * Every host is a ClickHouse HTTP endpoint (port 8123 by default). Without `cluster` there is
 * one host and one MergeTree table. With `cluster`, name every shard's host, in the order of the
 * cluster's shards (`system.clusters`): ClickHouse's own DDL across a cluster (`ON CLUSTER`)
 * needs ZooKeeper, so the engine creates the local tables on each host itself.
 */

export interface ClickHouseTarget {
  /** HTTP base URLs, shard order. */
  hosts: string[];
  database: string;
  cluster: string | undefined;
  username: string;
  password: string;
  /** Bound on one statement (ClickHouse's max_execution_time and the HTTP request). */
  timeoutMs: number;
}

export class ClickHouseUrlError extends Error {}

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function parseClickHouseUrl(raw: string): ClickHouseTarget {
  const match = /^clickhouse:\/\/(?:([^@/]*)@)?([^/?#]+)\/([^?#]*)(?:\?([^#]*))?$/.exec(raw.trim());
  if (!match) throw new ClickHouseUrlError('expected clickhouse://host:8123/database[?cluster=name]');
  const [, auth, hostList, database, query] = match;
  if (!database || !identifier.test(database)) throw new ClickHouseUrlError('the path must be a database name (letters, digits, _)');
  const hosts = hostList!.split(',').map((h) => {
    const hostMatch = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(h);
    if (!hostMatch) throw new ClickHouseUrlError(`"${h}" is not host:port`);
    const port = Number(hostMatch[2] ?? 8123);
    if (port < 1 || port > 65535) throw new ClickHouseUrlError(`port ${port} is out of range`);
    return `http://${hostMatch[1]}:${port}`;
  });
  const params = new URLSearchParams(query ?? '');
  for (const key of params.keys()) {
    if (key !== 'cluster' && key !== 'timeout_ms') throw new ClickHouseUrlError(`unknown option "${key}" (known: cluster, timeout_ms)`);
  }
  const cluster = params.get('cluster') ?? undefined;
  if (cluster !== undefined && !identifier.test(cluster)) throw new ClickHouseUrlError('cluster must be a name (letters, digits, _)');
  if (cluster === undefined && hosts.length > 1) throw new ClickHouseUrlError('several hosts need ?cluster=name (the remote_servers cluster they form)');
  const timeoutMs = params.has('timeout_ms') ? Number(params.get('timeout_ms')) : 30_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 3_600_000) throw new ClickHouseUrlError('timeout_ms must be an integer from 100 to 3600000');
  const [user, password] = (auth ?? '').split(':');
  return {
    hosts,
    database,
    cluster,
    username: decodeURIComponent(user || 'default'),
    password: decodeURIComponent(password ?? ''),
    timeoutMs,
  };
}

/** The URL with the password replaced, for logs and errors. */
export function redactClickHouseUrl(raw: string): string {
  return raw.replace(/^(clickhouse:\/\/[^:@/]*):[^@/]*@/, '$1:***@');
}
