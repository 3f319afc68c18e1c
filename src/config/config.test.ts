import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadConfig } from './config.js';
import { openBlobStore } from '../stores/blobs/open-blob-store.js';
import { opsctlArgs } from '../test-support/test-process.js';

test('defaults: API on 8080, delivery on 8081, data in ./data, embedded stores', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.cdnPort, 8081);
  assert.equal(config.publicUrl, 'http://localhost:8080');
  assert.equal(config.cdnUrl, 'http://localhost:8081');
  assert.match(config.dataDir, /data$/);
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.tailHeartbeatMs, 15_000);
  assert.equal(config.tailIdleTimeoutMs, 300_000);
  assert.equal(config.schemaCacheTtlMs, 300_000);
  assert.equal(config.purgeIntervalMs, 86_400_000);
  assert.deepEqual([...config.features], []);
  assert.equal(config.outboundAllowPrivate, false);
  assert.equal(config.monitorConcurrency, 1);
  assert.equal(loadConfig({ OPS_EVENTS_URL: 'clickhouse://127.0.0.1:8123/ops' }).monitorConcurrency, 4);
  assert.equal(loadConfig({ OPS_MONITOR_CONCURRENCY: '8' }).monitorConcurrency, 8);
  assert.equal(config.monitorWindowCounts, true);
  assert.equal(loadConfig({ OPS_MONITOR_WINDOW_COUNTS: 'false' }).monitorWindowCounts, false);
  assert.equal(config.events.threads, 2);
  assert.equal(loadConfig({ OPS_EVENTS_THREADS: '1' }).events.threads, 1);
});

const bad: Array<[Record<string, string>, string]> = [
  [{ OPS_PORT: 'abc' }, 'OPS_PORT'],
  [{ OPS_PORT: '70000' }, 'OPS_PORT'],
  [{ OPS_CDN_PORT: '-1' }, 'OPS_CDN_PORT'],
  [{ OPS_PORT: '9000', OPS_CDN_PORT: '9000' }, 'OPS_CDN_PORT'],
  [{ OPS_CDN_PORT: '8080' }, 'OPS_CDN_PORT'],
  [{ OPS_MONITOR_CONCURRENCY: '0' }, 'OPS_MONITOR_CONCURRENCY'],
  [{ OPS_EVENTS_THREADS: '0' }, 'OPS_EVENTS_THREADS'],
  [{ OPS_MONITOR_CONCURRENCY: '33' }, 'OPS_MONITOR_CONCURRENCY'],
  [{ OPS_DATABASE_URL: 'mysql://x' }, 'OPS_DATABASE_URL'],
  [{ OPS_DATABASE_URL: 'not a url' }, 'OPS_DATABASE_URL'],
  [{ OPS_FEATURES: 'logs,teleport' }, 'OPS_FEATURES'],
  [{ OPS_SECRET_KEY: 'short' }, 'OPS_SECRET_KEY'],
  [{ OPS_TAIL_HEARTBEAT_MS: '1.5' }, 'OPS_TAIL_HEARTBEAT_MS'],
  [{ OPS_LOG_LEVEL: 'loud' }, 'OPS_LOG_LEVEL'],
  [{ OPS_CDN_URL: 'ftp://cdn' }, 'OPS_CDN_URL'],
  [{ OPS_DNS_SERVERS: 'dns.google' }, 'OPS_DNS_SERVERS'],
  [{ OPS_DNS_SERVERS: '1.1.1.1,300.1.1.1' }, 'OPS_DNS_SERVERS'],
  [{ OPS_DNS_SERVERS: '1.1.1.1:70000' }, 'OPS_DNS_SERVERS'],
  [{ OPS_DNS_SERVERS: '[::1]:0' }, 'OPS_DNS_SERVERS'],
  [{ OPS_DNS_SERVERS: '[::1' }, 'OPS_DNS_SERVERS'],
  [{ OPS_DNS_SERVERS: '[1.1.1.1]:53' }, 'OPS_DNS_SERVERS'],
  [{ OPS_BLOB_URL: 'ftp://host/blobs' }, 'OPS_BLOB_URL'],
  [{ OPS_HEADERS_TIMEOUT_MS: 'soon' }, 'OPS_HEADERS_TIMEOUT_MS'],
  [{ OPS_HEADERS_TIMEOUT_MS: '0' }, 'OPS_HEADERS_TIMEOUT_MS'],
  [{ OPS_REQUEST_TIMEOUT_MS: '-1' }, 'OPS_REQUEST_TIMEOUT_MS'],
  [{ OPS_IDLE_TIMEOUT_MS: '1.5' }, 'OPS_IDLE_TIMEOUT_MS'],
  [{ OPS_KEEPALIVE_TIMEOUT_MS: '0' }, 'OPS_KEEPALIVE_TIMEOUT_MS'],
  [{ OPS_MAX_CONNECTIONS: '0' }, 'OPS_MAX_CONNECTIONS'],
  [{ OPS_MAX_CONNECTIONS: 'many' }, 'OPS_MAX_CONNECTIONS'],
  [{ OPS_OUTBOUND_ALLOW_PRIVATE: 'yes' }, 'OPS_OUTBOUND_ALLOW_PRIVATE'],
  [{ OPS_WEBHOOK_ALLOW_PRIVATE: 'yes' }, 'OPS_WEBHOOK_ALLOW_PRIVATE'],
];
for (const [env, variable] of bad) {
  test(`a bad ${variable} (${Object.values(env)[0]}) is refused naming the variable`, () => {
    assert.throws(() => loadConfig(env), (error: unknown) => error instanceof ConfigError && error.variable === variable && error.message.startsWith(variable));
  });
}

test('OPS_BLOB_URL: file:// and s3:// are accepted; a malformed s3:// URL is refused at start-up naming the variable', () => {
  assert.equal(loadConfig({ OPS_BLOB_URL: 's3://bucket/prefix' }).blobUrl, 's3://bucket/prefix');
  const s3 = 's3://media-bucket/ops?endpoint=http://127.0.0.1:18080&region=us-east-1&path_style=true';
  assert.equal(loadConfig({ OPS_BLOB_URL: s3 }).blobUrl, s3);
  assert.ok(openBlobStore({ blobUrl: s3, dataDir: '/nonexistent' }));
  for (const bad of ['s3://Not_A_Bucket/prefix', 's3://bucket/prefix?endpoint=ftp://host', 's3://bucket/prefix?path_style=maybe']) {
    assert.throws(
      () => openBlobStore({ blobUrl: loadConfig({ OPS_BLOB_URL: bad }).blobUrl, dataDir: '/nonexistent' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'OPS_BLOB_URL' && error.message.startsWith('OPS_BLOB_URL:'),
      bad,
    );
  }
});

test('connection limits: defaults leave room for slow uploads and live tail heartbeats', () => {
  const config = loadConfig({});
  assert.equal(config.headersTimeoutMs, 30_000);
  assert.equal(config.requestTimeoutMs, 3_600_000);
  assert.equal(config.idleTimeoutMs, 60_000);
  assert.equal(config.keepAliveTimeoutMs, 72_000);
  assert.equal(config.maxConnections, 10_000);
  // Unset, the idle timeout follows a longer heartbeat rather than cutting tail streams.
  assert.equal(loadConfig({ OPS_TAIL_HEARTBEAT_MS: '60000' }).idleTimeoutMs, 120_000);
  // 0 switches the whole-request and idle timeouts off.
  const off = loadConfig({ OPS_REQUEST_TIMEOUT_MS: '0', OPS_IDLE_TIMEOUT_MS: '0', OPS_HEADERS_TIMEOUT_MS: '120000' });
  assert.deepEqual([off.requestTimeoutMs, off.idleTimeoutMs, off.headersTimeoutMs], [0, 0, 120_000]);
});

test('a headers timeout longer than the request timeout is refused naming OPS_HEADERS_TIMEOUT_MS', () => {
  assert.throws(
    () => loadConfig({ OPS_REQUEST_TIMEOUT_MS: '10000', OPS_HEADERS_TIMEOUT_MS: '20000' }),
    (error: unknown) => error instanceof ConfigError && error.variable === 'OPS_HEADERS_TIMEOUT_MS' && /OPS_REQUEST_TIMEOUT_MS/.test(error.message),
  );
});

test('an idle timeout shorter than two tail heartbeats is refused naming OPS_IDLE_TIMEOUT_MS', () => {
  assert.throws(
    () => loadConfig({ OPS_IDLE_TIMEOUT_MS: '20000' }),
    (error: unknown) => error instanceof ConfigError && error.variable === 'OPS_IDLE_TIMEOUT_MS' && /OPS_TAIL_HEARTBEAT_MS \(15000\)/.test(error.message),
  );
  assert.equal(loadConfig({ OPS_IDLE_TIMEOUT_MS: '30000' }).idleTimeoutMs, 30_000);
  assert.equal(loadConfig({ OPS_IDLE_TIMEOUT_MS: '500', OPS_TAIL_HEARTBEAT_MS: '100' }).idleTimeoutMs, 500);
});

test('OPS_OUTBOUND_ALLOW_PRIVATE takes true/false (or 1/0); its former name OPS_WEBHOOK_ALLOW_PRIVATE still works', () => {
  assert.equal(loadConfig({ OPS_OUTBOUND_ALLOW_PRIVATE: 'true' }).outboundAllowPrivate, true);
  assert.equal(loadConfig({ OPS_OUTBOUND_ALLOW_PRIVATE: '1' }).outboundAllowPrivate, true);
  assert.equal(loadConfig({ OPS_OUTBOUND_ALLOW_PRIVATE: 'false' }).outboundAllowPrivate, false);
  assert.equal(loadConfig({ OPS_WEBHOOK_ALLOW_PRIVATE: 'true' }).outboundAllowPrivate, true);
  assert.equal(loadConfig({ OPS_WEBHOOK_ALLOW_PRIVATE: 'false' }).outboundAllowPrivate, false);
  assert.equal(loadConfig({ OPS_OUTBOUND_ALLOW_PRIVATE: 'true', OPS_WEBHOOK_ALLOW_PRIVATE: '1' }).outboundAllowPrivate, true, 'both, saying the same');
  assert.equal(loadConfig({ OPS_OUTBOUND_ALLOW_PRIVATE: 'false', OPS_WEBHOOK_ALLOW_PRIVATE: '' }).outboundAllowPrivate, false, 'an empty one is unset');
  assert.equal(loadConfig({ OPS_OUTBOUND_ALLOW_PRIVATE: '', OPS_WEBHOOK_ALLOW_PRIVATE: 'true' }).outboundAllowPrivate, true);
});

test('OPS_OUTBOUND_ALLOW_PRIVATE and OPS_WEBHOOK_ALLOW_PRIVATE both set and differing: refused at start-up naming both', () => {
  for (const [outbound, webhook] of [['true', 'false'], ['0', '1']]) {
    assert.throws(
      () => loadConfig({ OPS_OUTBOUND_ALLOW_PRIVATE: outbound, OPS_WEBHOOK_ALLOW_PRIVATE: webhook }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.variable === 'OPS_OUTBOUND_ALLOW_PRIVATE' &&
        error.message === `OPS_OUTBOUND_ALLOW_PRIVATE: is "${outbound}" but OPS_WEBHOOK_ALLOW_PRIVATE (its former name) is "${webhook}": set only OPS_OUTBOUND_ALLOW_PRIVATE`,
    );
  }
});

test('OPS_DNS_SERVERS: a comma list of ip[:port], IPv6 in brackets with a port; unset, the system\'s resolvers', () => {
  assert.deepEqual(loadConfig({}).dnsServers, []);
  assert.deepEqual(loadConfig({ OPS_DNS_SERVERS: ' 1.1.1.1, 127.0.0.1:5353 ,[2606:4700:4700::1111]:53,::1,' }).dnsServers, ['1.1.1.1', '127.0.0.1:5353', '[2606:4700:4700::1111]:53', '::1']);
  assert.throws(() => loadConfig({ OPS_DNS_SERVERS: 'dns.google' }), /^ConfigError: OPS_DNS_SERVERS: "dns\.google" is not an IP address with an optional port \(e\.g\. 1\.1\.1\.1/);
});

test('features and CORS origins are comma lists', () => {
  const config = loadConfig({ OPS_FEATURES: 'logs, cases', OPS_CORS_ORIGINS: 'https://a.example, https://b.example' });
  assert.deepEqual([...config.features], ['logs', 'cases']);
  assert.deepEqual(config.corsOrigins, ['https://a.example', 'https://b.example']);
});

test('the process exits at start-up with a message naming a bad variable', () => {
  const result = spawnSync(process.execPath, opsctlArgs('serve'), {
    env: { ...process.env, OPS_PORT: 'eighty' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /OPS_PORT: expected a whole number/);
});
