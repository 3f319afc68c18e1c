import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../config/config.js';
import { OffsetClock } from '../shared/clock.js';
import { startServer, type RunningServer } from '../server.js';
import { parseScopes } from '../tokens/token-service.js';
import { cheapHashesForTests } from '../dashboard/passwords.js';
import type { Scope } from '../auth/scopes.js';
import type { Mode, Tenant } from '../tenancy/tenant.js';
import type { EventsRuntimeOptions } from '../events/runtime.js';
import type { WorkerTimings } from '../notifications/delivery-worker.js';
import type { MonitorsOptions } from '../monitors/capability.js';
import type { SsoOptions } from '../sso/capability.js';

/** One tenant of the matrix, with a token holding every scope. */
export interface TestTenant extends Tenant {
  userId: string;
  token: string;
}

export interface TestServer {
  /** http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  apiUrl: string;
  cdnUrl: string;
  server: RunningServer;
  clock: OffsetClock;
  dataDir: string;
  /** Everything the server logged, one JSON line each. */
  logs: string[];
  /**
   * The tenant matrix: `a` (org A, project 1, live), `aTest` (same project, test mode),
   * `aOther` (org A, project 2, live), `b` (org B, live).
   */
  tenants: { a: TestTenant; aTest: TestTenant; aOther: TestTenant; b: TestTenant };
  token(tenant: Tenant, scopes: Scope[] | 'all', options?: { mode?: Mode; expiresAt?: string }): Promise<string>;
  request(method: string, urlPath: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  token?: string | null;
  json?: unknown;
  /** Raw body; a Buffer is sent as its bytes. */
  body?: BodyInit | Uint8Array;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // Tests inspect arbitrary JSON; each assertion narrows what it reads.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  /** Plan of organisation A (default pro); B is always free. */
  plan?: string;
  /** Event store settings (a smaller memory limit). */
  events?: EventsRuntimeOptions;
  /** The notification worker's timings (a shorter timeout and backoff). */
  notifications?: Partial<WorkerTimings>;
  /** The monitor scheduler (a long tick: the test calls `server.monitors.evaluateDue()`). */
  monitors?: MonitorsOptions;
  /** How long closing waits for answers in flight (default 10 s). */
  drainMs?: number;
  /** Single sign-on: `publicHostsForTests`, names whose loopback providers count as public (src/outbound/guarded-agent.ts). */
  sso?: SsoOptions;
  /**
   * Compile every route's schemas at start, as `opsctl serve` does. A test server otherwise
   * compiles each route's when it first runs (1.6 s of CPU less per start; src/http/validation.ts).
   */
  compileSchemasAtStart?: boolean;
}

/** PostgreSQL leg: OPS_TEST_DATABASE_URL names a server; each test server gets its own database. */
async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const admin = process.env.OPS_TEST_DATABASE_URL;
  if (!admin) return undefined;
  // Loaded only on that leg: pg is not for every test file to load (~0.1 s of CPU).
  const { default: pg } = await import('pg');
  const name = `ops_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * S3 leg: OPS_TEST_BLOB_URL names a bucket on an S3-compatible server; each test server stores
 * its media under a prefix of its own, emptied when it closes. A test that sets OPS_BLOB_URL
 * itself keeps its own.
 */
async function freshBlobStore(env: Record<string, string> | undefined): Promise<{ url: string; clear: () => Promise<void> } | undefined> {
  const base = process.env.OPS_TEST_BLOB_URL;
  if (!base || env?.OPS_BLOB_URL !== undefined) return undefined;
  // Loaded only on that leg: the AWS SDK is not for every test file to load.
  const { clearS3Prefix, freshS3Url } = await import('./stores/s3-testing.js');
  const url = await freshS3Url(base);
  return { url, clear: () => clearS3Prefix(url) };
}

/**
 * ClickHouse leg: OPS_TEST_CLICKHOUSE_URL names a ClickHouse server or cluster; each test
 * server keeps its events in a database of its own, dropped when it closes. A test that sets
 * OPS_EVENTS_URL itself keeps its own.
 */
async function freshClickHouse(env: Record<string, string> | undefined): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const base = process.env.OPS_TEST_CLICKHOUSE_URL;
  if (!base || env?.OPS_EVENTS_URL !== undefined) return undefined;
  const { dropClickHouseDatabase, freshClickHouseUrl } = await import('./engine/clickhouse-testing.js');
  const url = freshClickHouseUrl(base);
  return { url, drop: () => dropClickHouseDatabase(url) };
}

/** Starts the real server on free ports, temporary stores and a movable clock. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  // Dashboard passwords hashed at a test cost (passwords.ts says why; passwords.test.ts checks the real one).
  cheapHashesForTests();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-test-'));
  const database = await freshPostgresDatabase();
  const blobStore = await freshBlobStore(options.env);
  const clickhouse = await freshClickHouse(options.env);
  const config = loadConfig({
    OPS_PORT: '0',
    OPS_CDN_PORT: '0',
    OPS_HOST: '127.0.0.1',
    OPS_DATA_DIR: dataDir,
    OPS_RATE_LIMIT_PER_SECOND: '100000',
    OPS_RATE_LIMIT_BURST: '100000',
    ...(database ? { OPS_DATABASE_URL: database.url } : {}),
    ...(blobStore ? { OPS_BLOB_URL: blobStore.url } : {}),
    ...(clickhouse ? { OPS_EVENTS_URL: clickhouse.url } : {}),
    ...options.env,
  });
  const clock = new OffsetClock();
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const server = await startServer(config, { clock, logger: { level: 'info', stream, redact: ['req.headers.authorization'] }, events: options.events, notifications: options.notifications, monitors: options.monitors, sso: options.sso, drainMs: options.drainMs, compileSchemasOnFirstUse: !options.compileSchemasAtStart });
  const { ctx } = server;

  const token = async (tenant: Tenant, scopes: Scope[] | 'all', opts: { mode?: Mode; expiresAt?: string } = {}) => {
    const created = await ctx.tokens.create({
      tenant: { ...tenant, mode: opts.mode ?? tenant.mode },
      name: 'test',
      scopes: parseScopes(scopes),
      expiresAt: opts.expiresAt ?? null,
    });
    return created.token;
  };
  const orgA = await ctx.orgs.createOrg({ name: 'Org A', plan: options.plan ?? 'pro', ownerEmail: 'owner-a@example.com', ownerName: 'Owner A' });
  const orgB = await ctx.orgs.createOrg({ name: 'Org B', plan: 'free', ownerEmail: 'owner-b@example.com', ownerName: 'Owner B' });
  const { project_id: otherProject } = await ctx.orgs.createProject(orgA.org_id, 'second');
  const tenant = async (orgId: string, projectId: string, mode: Mode, userId: string): Promise<TestTenant> => {
    const t = { orgId, projectId, mode };
    return { ...t, userId, token: await token(t, 'all') };
  };
  const tenants = {
    a: await tenant(orgA.org_id, orgA.project_id, 'live', orgA.user_id),
    aTest: await tenant(orgA.org_id, orgA.project_id, 'test', orgA.user_id),
    aOther: await tenant(orgA.org_id, otherProject, 'live', orgA.user_id),
    b: await tenant(orgB.org_id, orgB.project_id, 'live', orgB.user_id),
  };
  const baseUrl = `${server.apiUrl}/v1`;

  const request = async (method: string, urlPath: string, opts: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    const auth = opts.token === undefined ? tenants.a.token : opts.token;
    if (auth !== null) headers.authorization = `Bearer ${auth}`;
    let body = opts.body as BodyInit | undefined;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    const url = urlPath.startsWith('http') ? urlPath : `${baseUrl}${urlPath}`;
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (delivery bodies, SSE): tests read `text`
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  };

  return {
    baseUrl,
    apiUrl: server.apiUrl,
    cdnUrl: server.cdnUrl,
    server,
    clock,
    dataDir,
    logs,
    tenants,
    token,
    request,
    close: async () => {
      await server.close();
      await database?.drop();
      await blobStore?.clear();
      await clickhouse?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
