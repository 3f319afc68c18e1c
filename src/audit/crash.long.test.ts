import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { parseScopes } from '../tokens/token-service.js';
import { exited, freePort, serveProcess } from '../test-support/test-process.js';

/** On the PostgreSQL leg the processes share a database of their own. */
async function database(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const admin = process.env.OPS_TEST_DATABASE_URL;
  if (!admin) return { env: {}, drop: async () => {} };
  const name = `ops_test_audit_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { env: { OPS_DATABASE_URL: url.toString() }, drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

const rounds = 2;

test('SIGKILL of a real `opsctl serve` while clients change tokens, channels and datasets (once right after an answer committed, otherwise wherever the requests are): every change has exactly one entry and every entry its change', { timeout: 120_000 }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-audit-crash-'));
  const db = await database();
  const env = { OPS_RATE_LIMIT_PER_SECOND: '100000', OPS_RATE_LIMIT_BURST: '100000', OPS_OUTBOUND_ALLOW_PRIVATE: 'true', ...db.env };
  const config = loadConfig({ OPS_DATA_DIR: dataDir, ...db.env });
  const setup = await createContext(config, systemClock);
  const org = await setup.orgs.createOrg({ name: 'Crash', plan: 'enterprise', ownerEmail: 'crash@example.com' });
  const { token, id: clientTokenId } = await setup.tokens.create({ tenant: { orgId: org.org_id, projectId: org.project_id, mode: 'live' }, name: 'client', scopes: parseScopes('all'), expiresAt: null });
  await setup.close();

  const port = await freePort();
  const base = `http://127.0.0.1:${port}/v1`;
  /** `onAnswer` runs as soon as the answer's head arrives, before its body is read. */
  const call = async (method: string, urlPath: string, json?: unknown, onAnswer?: () => void) => {
    const r = await fetch(`${base}${urlPath}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    onAnswer?.();
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const children: ChildProcess[] = [];
  let n = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      const child = await serveProcess(dataDir, port, env);
      children.push(child);
      let stop = false;
      let answered = 0;
      const enough = 10 + Math.floor(Math.random() * 20);
      let victimSent = false;
      // One change after another per client: create, then (every other time) undo it.
      const changes = [
        async (i: number, kill?: () => void) => {
          const created = await call('POST', '/tokens', { name: `crash-${i}`, scopes: ['media:read'] }, kill);
          if (created.status === 201 && i % 2 === 0 && !stop) await call('DELETE', `/tokens/${String(created.body.id)}`);
        },
        async (i: number, kill?: () => void) => {
          const created = await call('POST', '/channels', { name: `crash-${i}`, kind: 'webhook', url: 'http://127.0.0.1:9/hook' }, kill);
          if (created.status === 201 && i % 2 === 0 && !stop) await call('DELETE', `/channels/${String(created.body.id)}`);
        },
        async (i: number, kill?: () => void) => {
          const created = await call('POST', '/datasets', { name: `crash-${i}` }, kill);
          if (created.status === 201 && i % 2 === 0 && !stop) await call('DELETE', `/datasets/crash-${i}`);
        },
      ];
      const client = async (c: number) => {
        while (!stop) {
          const i = n++;
          const change = changes[i % changes.length]!;
          try {
            if (c === 0 && !victimSent && answered >= enough) {
              victimSent = true;
              // Killed the moment its answer starts: the change committed, the answer never used.
              await change(i, () => child.kill('SIGKILL'));
              return;
            }
            await change(i);
            answered++;
          } catch {
            return; // the server died mid-request
          }
        }
      };
      const clients = Array.from({ length: 4 }, (_, c) => client(c));
      await exited(child);
      stop = true;
      await Promise.all(clients);
    }

    // Every process is dead: read what the kills left, straight from the store.
    const check = await createContext(config, systemClock);
    try {
      const store = check.metadata.db;
      const entries = await store.selectFrom('audit_entries').select(['action', 'target_id']).where('org_id', '=', org.org_id).execute();
      const targets = (action: string) => {
        const ids = entries.filter((e) => e.action === action).map((e) => e.target_id);
        assert.equal(new Set(ids).size, ids.length, `${action}: one entry per change`);
        return new Set(ids);
      };
      const same = (what: string, actual: Set<string>, expected: Set<string>) =>
        assert.deepEqual([...actual].sort(), [...expected].sort(), `${what}: every change has its entry and every entry its change`);

      const tokens = await store.selectFrom('api_tokens').select(['id', 'revoked_at']).where('name', 'like', 'crash-%').execute();
      same('token.create', targets('token.create'), new Set([clientTokenId, ...tokens.map((x) => x.id)]));
      same('token.revoke', targets('token.revoke'), new Set(tokens.filter((x) => x.revoked_at !== null).map((x) => x.id)));

      const channels = new Set((await store.selectFrom('channels').select('id').execute()).map((x) => x.id));
      const channelCreates = targets('channel.create');
      const channelDeletes = targets('channel.delete');
      same('channel.create', channelCreates, new Set([...channels, ...channelDeletes]));
      assert.ok([...channelDeletes].every((id) => !channels.has(id)), 'channel.delete: the channel is gone');

      const datasets = await store.selectFrom('datasets').select(['id', 'archived_at']).where('name', 'like', 'crash-%').execute();
      same('dataset.create', targets('dataset.create'), new Set(datasets.map((x) => x.id)));
      same('dataset.archive', targets('dataset.archive'), new Set(datasets.filter((x) => x.archived_at !== null).map((x) => x.id)));
      t.diagnostic(`${n} changes started over ${rounds} kills; ${entries.length} entries; ${tokens.length} tokens, ${channelCreates.size} channels, ${datasets.length} datasets`);
      assert.ok(tokens.length > 0 && channelCreates.size > 0 && datasets.length > 0);
    } finally {
      await check.close();
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
