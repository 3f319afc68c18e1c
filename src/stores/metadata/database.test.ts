import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestServer } from '../../test-support/test-server.js';
import { legs } from '../../test-support/ci.js';

const adminUrl = process.env.OPS_TEST_DATABASE_URL;
const { test } = legs.postgres();

test(
  'PostgreSQL: connections the server closes while idle are replaced; the API keeps serving and logs a warning',
  async () => {
    const s = await startTestServer();
    try {
      assert.equal((await s.request('GET', `/orgs/${s.tenants.a.orgId}/members`)).status, 200);
      const database = new URL(s.server.ctx.config.databaseUrl!).pathname.slice(1);
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      const { rows } = await admin.query('select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1', [database]);
      await admin.end();
      assert.ok(rows.length > 0, 'the pool held at least one idle connection');
      for (let i = 0; i < 50 && !s.logs.some((line) => line.includes('closed by the server')); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(s.logs.some((line) => line.includes('closed by the server')), 'the lost connection was logged');
      for (let i = 0; i < 5; i++) assert.equal((await s.request('GET', `/orgs/${s.tenants.a.orgId}/members`)).status, 200);
    } finally {
      await s.close();
    }
  },
);
