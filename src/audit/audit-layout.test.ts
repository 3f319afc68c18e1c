import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { migrations } from '../stores/metadata/migrations/index.js';
import type { Database } from '../stores/metadata/schema.js';
import type { CursorKey } from '../pagination/cursor.js';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { audit, auditRow, type AuditChange } from './record.js';
import { AuditService, auditRetentionDays, blocksPerPage } from './audit-service.js';
import { legs } from '../test-support/ci.js';

interface Entry {
  id: string;
  ts: string;
  action: string;
  actor: { id: string };
  target: { id: string };
}

/** What this suite writes: entry i at t0 + i ms, target `l<i>`; org by i (see below). */
interface Written {
  i: number;
  org: 'a' | 'b' | 'noise';
  at: number;
  action: 'token.create' | 'dataset.update';
  actor: string;
}

const total = 24_000;
const rareActor = 'tok_layoutrare';
const dayMs = 86_400_000;

/**
 * The audit log's list over many organisations interleaved (DECISIONS.md §20, docs/audit.md
 * "Order and layout"): on SQLite entries are kept in commit order and found through blocks of
 * 1,024 sequence numbers (migration 0019), on PostgreSQL through an index; the answers are the
 * same but for where a page of a sparse organisation ends on SQLite (a bound on the rows it reads).
 */
describe('audit log over many organisations: pages, filters and cursors across blocks', () => {
  let s: TestServer;
  let sqlite: boolean;
  const written: Written[] = [];
  let t0 = 0;
  /** Entries each organisation had before this suite wrote (setup's), newest first. */
  const existing: Record<'a' | 'b', string[]> = { a: [], b: [] };

  const get = (org: 'a' | 'b', query: string) => s.request('GET', `/orgs/${s.tenants[org].orgId}/audit${query}`, { token: s.tenants[org].token });
  /** Every page of a list: the entries and how many pages it took. */
  async function all(org: 'a' | 'b', query = '', limit = 100): Promise<{ entries: Entry[]; pages: Entry[][] }> {
    const pages: Entry[][] = [];
    let cursor = '';
    do {
      const res = await get(org, `?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.status, 200, res.text);
      pages.push(res.body.entries as Entry[]);
      cursor = res.body.next_cursor as string;
      assert.equal(res.body.has_more, cursor !== '');
      assert.ok(pages.length < 500, 'the list ends');
    } while (cursor);
    return { entries: pages.flat(), pages };
  }
  /** This suite's entries of `org` matching `keep`, newest first, as their targets. */
  const expected = (org: 'a' | 'b', keep: (w: Written) => boolean = () => true) =>
    written
      .filter((w) => w.org === org && keep(w))
      .reverse()
      .map((w) => `l${w.i}`);
  const targets = (entries: Entry[]) => entries.map((e) => e.target.id);

  before(async () => {
    s = await startTestServer();
    sqlite = s.server.ctx.metadata.dialect === 'sqlite';
    const db = s.server.ctx.metadata.db;
    const noise: Array<{ org_id: string }> = [];
    for (let n = 0; n < 3; n++) noise.push(await s.server.ctx.orgs.createOrg({ name: `Noise ${n}`, plan: 'pro', ownerEmail: `noise${n}@example.com` }));
    existing.a = (await all('a')).entries.map((e) => e.id);
    existing.b = (await all('b')).entries.map((e) => e.id);
    t0 = s.clock.now() + 1000;
    // a: one entry in 7, every 50th of them by a rare actor and action; b: one in 1,100, so each
    // of its entries is alone in its block; the rest spread over three other organisations.
    let a = 0;
    for (let i = 0; i < total; i++) {
      const org = i % 1100 === 550 ? 'b' : i % 7 === 0 ? 'a' : 'noise';
      const rare = org === 'a' && a++ % 50 === 0;
      written.push({ i, org, at: t0 + i, action: rare ? 'dataset.update' : 'token.create', actor: rare ? rareActor : 'tok_layoutbusy' });
    }
    const change = (w: Written): AuditChange => ({
      action: w.action,
      origin: { actor: { type: 'token', id: w.actor, name: 'layout' }, requestId: `req_l${w.i}`, ip: '127.0.0.1', userAgent: 'test' },
      orgId: w.org === 'noise' ? noise[w.i % 3]!.org_id : s.tenants[w.org].orgId,
      target: { type: 'token', id: `l${w.i}` },
      at: w.at,
    });
    for (let i = 0; i < total; i += 1000) {
      await db.transaction().execute((trx) => audit.recordAll(trx, written.slice(i, i + 1000).map(change)));
    }
  });
  after(() => s.close());

  test('a busy organisation: every entry once, newest first, through cursor pages that cross blocks', async () => {
    const { entries } = await all('a', '', 97);
    const mine = expected('a');
    assert.deepEqual(targets(entries.slice(0, mine.length)), mine);
    assert.deepEqual(entries.slice(mine.length).map((e) => e.id), existing.a);
    for (let k = 1; k < entries.length; k++) assert.ok(entries[k - 1]!.ts >= entries[k]!.ts, 'newest first');
  });

  test('a sparse organisation among busy ones: every entry, a page reading at most 16 blocks', async () => {
    const started = process.hrtime.bigint();
    const { entries, pages } = await all('b');
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const mine = expected('b');
    assert.ok(mine.length > blocksPerPage, 'more blocks than a page reads');
    assert.deepEqual(targets(entries.slice(0, mine.length)), mine);
    assert.deepEqual(entries.slice(mine.length).map((e) => e.id), existing.b);
    // On SQLite its entries are one per block: a page of 100 ends after 16 of them, with more to
    // come; PostgreSQL's index finds them all at once.
    if (sqlite) assert.ok(pages.length > 1 && pages.every((p) => p.length <= blocksPerPage + existing.b.length), pages.map((p) => p.length).join(' '));
    else assert.equal(pages.length, 1);
    console.log(`  b: ${entries.length} entries in ${pages.length} pages, ${ms.toFixed(0)} ms over HTTP`);
  });

  test('filters (actor, action, target_id, from, to) within blocks, across pages', async () => {
    const rare = (w: Written) => w.actor === rareActor;
    assert.deepEqual(targets((await all('a', `&actor=${rareActor}`, 3)).entries), expected('a', rare));
    assert.deepEqual(targets((await all('a', '&action=dataset.update', 4)).entries), expected('a', rare));
    const deep = written.find((w) => w.org === 'a' && w.i > 2000)!;
    assert.deepEqual(targets((await all('a', `&target_id=l${deep.i}`)).entries), [`l${deep.i}`]);
    const deepB = written.find((w) => w.org === 'b')!;
    assert.deepEqual(targets((await all('b', `&target_id=l${deepB.i}`)).entries), [`l${deepB.i}`]);

    const iso = (ms: number) => new Date(ms).toISOString();
    const [from, to] = [t0 + 3_000, t0 + 17_500];
    const inRange = (w: Written) => w.at >= from && w.at < to;
    assert.deepEqual(targets((await all('a', `&from=${iso(from)}&to=${iso(to)}`, 50)).entries), expected('a', inRange));
    assert.deepEqual(targets((await all('b', `&from=${iso(from)}&to=${iso(to)}`, 5)).entries), expected('b', inRange));
    assert.deepEqual(targets((await all('a', `&from=${iso(from)}&actor=${rareActor}`, 2)).entries), expected('a', (w) => w.at >= from && rare(w)));
    // Before every entry of this suite: only setup's; after every one: none, and no more.
    assert.deepEqual((await all('a', `&to=${iso(t0)}`)).entries.map((e) => e.id), existing.a);
    const after = await get('a', `?from=${iso(t0 + total)}`);
    assert.deepEqual([after.body.entries, after.body.has_more, after.body.next_cursor], [[], false, '']);
  });

  test("a cursor continues its own organisation's list with its filters only", async () => {
    const page = await get('a', '?limit=5');
    const cursor = page.body.next_cursor as string;
    assert.ok(cursor);
    const next = await get('a', `?limit=5&cursor=${cursor}`);
    assert.equal(next.status, 200);
    assert.deepEqual(targets(next.body.entries as Entry[]), expected('a').slice(5, 10));
    assert.equal((await get('b', `?limit=5&cursor=${cursor}`)).status, 400, "another organisation's cursor");
    assert.equal((await get('a', `?limit=5&actor=${rareActor}&cursor=${cursor}`)).status, 400, "another filter's cursor");
    const sparse = await get('b', '?limit=100');
    assert.ok(sparse.body.next_cursor || !sqlite);
    if (sparse.body.next_cursor) assert.equal((await get('a', `?limit=100&cursor=${sparse.body.next_cursor}`)).status, 400);
  });

  // PostgreSQL keeps the change time and lists by (ts, id).
  legs.sqlite().test('SQLite stamps an entry no earlier than the one committed before it: list order is time order', async () => {
    const last = (await get('a', '?limit=1')).body.entries[0] as Entry;
    const db = s.server.ctx.metadata.db;
    // A change whose time was taken before the last commit, committed after it.
    await db.transaction().execute((trx) =>
      audit.record(trx, { action: 'token.create', origin: undefined, orgId: s.tenants.a.orgId, target: { type: 'token', id: `l${total}` }, at: Date.parse(last.ts) - 60_000 }),
    );
    const [late, previous] = (await get('a', '?limit=2')).body.entries as Entry[];
    assert.equal(late!.target.id, `l${total}`);
    assert.equal(previous!.id, last.id);
    // Raised to the log's last entry (another organisation's, this suite's last), not kept an hour back.
    assert.equal(late!.ts, new Date(t0 + total - 1).toISOString(), 'raised to the previous entry');
    // As the rest of the list sees it: the newest of a's.
    written.push({ i: total, org: 'a', at: t0 + total, action: 'token.create', actor: 'operator' });
  });

  test('the 400-day purge deletes the older entries, keeps the list of the younger ones exact, and the log starts again once empty', async () => {
    const half = t0 + total / 2;
    // The purge's own clock stands still at the cutoff `half`: entries are 1 ms apart, so a clock
    // that kept running between setting it and the purge would take the next one too.
    let now = half + auditRetentionDays * dayMs;
    const service = new AuditService(s.server.ctx.metadata.db, { now: () => now });
    const db = s.server.ctx.metadata.db;
    const before = (await db.selectFrom('audit_entries').select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    s.clock.offsetMs = half - Date.now() + auditRetentionDays * dayMs;
    try {
      const purged = await service.purge();
      const left = Number((await db.selectFrom('audit_entries').select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      assert.equal(purged.entries, Number(before) - left);
      assert.equal(left, written.filter((w) => w.i >= total / 2).length);
      const kept = (w: Written) => w.at >= half;
      assert.deepEqual(targets((await all('a', '', 100)).entries), expected('a', kept));
      assert.deepEqual(targets((await all('b')).entries), expected('b', kept));
      if (sqlite) {
        const min = (await db.selectFrom('audit_blocks').select((e) => e.fn.min('block').as('b')).executeTakeFirstOrThrow()).b;
        assert.equal(Number(min), Math.floor(Number((await db.selectFrom('audit_entries').select((e) => e.fn.min('seq').as('s')).executeTakeFirstOrThrow()).s) / 1024));
      }
      now += dayMs;
      s.clock.advance(dayMs);
      await service.purge();
      assert.deepEqual((await all('a')).entries, []);
      if (sqlite) assert.deepEqual(await db.selectFrom('audit_blocks').selectAll().execute(), [], 'no block outlives its entries');
    } finally {
      s.clock.offsetMs = 0;
    }
    // The empty log starts again (on SQLite at seq 1): a new entry lists, alone.
    const res = await s.request('POST', '/tokens', { json: { name: 'after the purge', scopes: ['media:read'] } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(
      (await all('a')).entries.map((e) => e.action),
      ['token.create'],
    );
  });
});

describe('migration 0019 on SQLite keeps the entries written before it', () => {
  test('copied in time order, each organisation listed as before, its blocks built', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-0019-'));
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(path.join(dir, 'metadata.sqlite')) }) });
    try {
      const upTo = (last: string) => new Migrator({ db, provider: { getMigrations: async () => Object.fromEntries(Object.entries(migrations).filter(([name]) => name <= last)) } });
      assert.equal((await upTo('0018-token-indexes-partial').migrateToLatest()).error, undefined);
      // Written out of time order, as concurrent changes could commit under 0014's layout.
      const rows = Array.from({ length: 3000 }, (_, i) => ({ i, org: `org${i % 3}`, at: Date.UTC(2026, 0, 1) + ((i * 7919) % 3000) * 1000 }));
      for (let k = 0; k < rows.length; k += 500) {
        await db.insertInto('audit_entries').values(rows.slice(k, k + 500).map((r) => auditRow({ action: 'token.create', origin: undefined, orgId: r.org, target: { type: 'token', id: `m${r.i}` }, at: r.at }))).execute();
      }
      assert.equal((await upTo('0019-audit-append').migrateToLatest()).error, undefined);
      const service = new AuditService(db, { now: () => Date.now() });
      for (const org of ['org0', 'org1', 'org2']) {
        const listed: string[] = [];
        let after: CursorKey | undefined;
        do {
          const page = await service.list(org, {}, { limit: 100, after });
          listed.push(...page.entries.map((e) => e.target.id));
          after = page.next;
        } while (after);
        const want = rows.filter((r) => r.org === org).sort((x, y) => y.at - x.at).map((r) => `m${r.i}`);
        assert.deepEqual(listed, want, org);
      }
      const blocks = await db.selectFrom('audit_blocks').selectAll().orderBy('org_id').orderBy('block').execute();
      assert.deepEqual(blocks.map((b) => `${b.org_id}:${b.block}`), ['org0:0', 'org0:1', 'org0:2', 'org1:0', 'org1:1', 'org1:2', 'org2:0', 'org2:1', 'org2:2']);
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
