import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { exited, freePort, opsctlArgs } from '../test-process.js';
import { loadConfig } from '../../config/config.js';
import { createContext, type AppContext } from '../../app/context.js';
import { systemClock } from '../../shared/clock.js';
import { parseScopes } from '../../tokens/token-service.js';
import type { Tenant } from '../../tenancy/tenant.js';

/**
 * A data directory (and on the PostgreSQL leg a database of its own) for tests that run the
 * server as child processes, with an organisation and an all-scopes token made beforehand.
 */
export async function processStore(prefix: string): Promise<{
  dataDir: string;
  env: Record<string, string>;
  tenant: Tenant;
  token: string;
  /** A context on the same stores, for what a test does beside the processes. */
  open(): Promise<AppContext>;
  drop(): Promise<void>;
}> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const admin = process.env.OPS_TEST_DATABASE_URL;
  const env: Record<string, string> = { OPS_OUTBOUND_ALLOW_PRIVATE: 'true', OPS_RATE_LIMIT_PER_SECOND: '100000', OPS_RATE_LIMIT_BURST: '100000' };
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  const name = `ops_test_notify_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  if (admin) {
    await run(`CREATE DATABASE ${name}`);
    const url = new URL(admin);
    url.pathname = `/${name}`;
    env.OPS_DATABASE_URL = url.toString();
  }
  const open = () => createContext(loadConfig({ OPS_DATA_DIR: dataDir, ...env }), systemClock);
  const setup = await open();
  const org = await setup.orgs.createOrg({ name: 'Notify', plan: 'pro', ownerEmail: 'notify@example.com' });
  const tenant: Tenant = { orgId: org.org_id, projectId: org.project_id, mode: 'live' };
  const { token } = await setup.tokens.create({ tenant, name: 't', scopes: parseScopes('all'), expiresAt: null });
  await setup.close();
  return {
    dataDir,
    env,
    tenant,
    token,
    open,
    drop: async () => {
      if (admin) await run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A call to a child server's API with the token. */
export async function call(port: number, token: string, method: string, urlPath: string, json?: unknown) {
  const r = await fetch(`http://127.0.0.1:${port}/v1${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await r.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: r.status, text, body: (text ? JSON.parse(text) : undefined) as any };
}

/** A POST on a connection of its own, so node:cluster hands it to either worker (keep-alive would pin one). */
export function postAlone(port: number, token: string, urlPath: string, json: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(json);
    const req = http.request(
      { host: '127.0.0.1', port, path: `/v1${urlPath}`, method: 'POST', agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `opsctl serve --workers 2` on the store, answering /readyz before this resolves. */
export async function workers(store: Awaited<ReturnType<typeof processStore>>) {
  const port = await freePort();
  const primary = spawn(process.execPath, opsctlArgs('serve', '--workers', '2'), {
    env: { ...process.env, ...store.env, OPS_DATA_DIR: store.dataDir, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), OPS_HOST: '127.0.0.1', OPS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 600 && !(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
  return {
    port,
    close: async () => {
      primary.kill('SIGTERM');
      await exited(primary);
    },
  };
}
