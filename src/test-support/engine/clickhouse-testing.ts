/**
 * For the ClickHouse test leg (OPS_TEST_CLICKHOUSE_URL, from `scripts/clickhouse.sh env`): each
 * test server gets a database of its own on the same cluster, dropped on every host at the end.
 */
import { createClient } from '@clickhouse/client';
import { parseClickHouseUrl } from '../../config/clickhouse-url.js';

/** The base URL with a fresh database name in its path. */
export function freshClickHouseUrl(base: string): string {
  const name = `ops_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  return base.replace(/^(clickhouse:\/\/[^/]+\/)[^?#]*/, `$1${name}`);
}

/** Drops the URL's database on every host it names. */
export async function dropClickHouseDatabase(url: string): Promise<void> {
  const target = parseClickHouseUrl(url);
  for (const host of target.hosts) {
    // A database of many parts (hot columns make each part hundreds of files) can take longer
    // than the client's default 30 s to drop on a loaded machine.
    const client = createClient({ url: host, username: target.username, password: target.password, request_timeout: 300_000, log: { level: 127 as never } });
    try {
      await client.command({ query: `DROP DATABASE IF EXISTS ${target.database}` });
    } finally {
      await client.close();
    }
  }
}
