import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestTenant } from '../test-support/test-server.js';
import { png } from '../test-support/media/test-files.js';

const isoMs = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('cases (OPS_FEATURES=cases)', () => {
  let s: TestServer;
  let others: Array<[string, TestTenant]>;
  before(async () => {
    s = await startTestServer({ env: { OPS_FEATURES: 'logs,cases,apps' } });
    others = [
      ['test mode', s.tenants.aTest],
      ['other project', s.tenants.aOther],
      ['other org', s.tenants.b],
    ];
  });
  after(() => s.close());

  const upload = async (token = s.tenants.a.token) => {
    const r = await s.request('POST', '/media/base64', { token, json: { filename: 'evidence.png', content_type: 'image/png', data: png().toString('base64') } });
    assert.equal(r.status, 201, r.text);
    return r.body as { id: string; url: string };
  };
  const create = async (json: unknown, token = s.tenants.a.token) => s.request('POST', '/cases', { token, json });

  test('POST /cases: 201 with every field of the Case shape; description defaults to ""', async () => {
    const r = await create({ title: 'Cheater on eu-1' });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['attachments', 'created_at', 'description', 'id', 'status', 'title', 'updated_at']);
    assert.match(r.body.id, /^cas_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(r.body.title, 'Cheater on eu-1');
    assert.equal(r.body.description, '');
    assert.equal(r.body.status, 'open');
    assert.deepEqual(r.body.attachments, []);
    assert.match(r.body.created_at, isoMs);
    assert.equal(r.body.updated_at, r.body.created_at);
    const withDescription = await create({ title: 't', description: 'aimbot reports' });
    assert.equal(withDescription.body.description, 'aimbot reports');
    const got = await s.request('GET', `/cases/${r.body.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, r.body);
  });

  test('POST /cases: 400 bad_request for a missing, empty or blank title and wrong types', async () => {
    for (const json of [{}, { title: '' }, { title: '   ' }, { title: null }, { title: 'x', description: {} }, { title: 'x'.repeat(201) }, []]) {
      const r = await create(json);
      assert.equal(r.status, 400, JSON.stringify(json));
      assert.equal(r.body.error.code, 'bad_request');
      assert.equal(typeof r.body.error.request_id, 'string');
    }
    const notJson = await s.request('POST', '/cases', { body: '{nope', headers: { 'content-type': 'application/json' } });
    assert.equal(notJson.status, 400);
  });

  test('status transitions: open ↔ closed → archived; archived is final; illegal → 409 conflict', async () => {
    const { body: c } = await create({ title: 'transitions' });
    const patch = (json: unknown) => s.request('PATCH', `/cases/${c.id}`, { json });
    const archivedFromOpen = await patch({ status: 'archived' });
    assert.equal(archivedFromOpen.status, 409);
    assert.equal(archivedFromOpen.body.error.code, 'conflict');
    s.clock.advance(5);
    const closed = await patch({ status: 'closed' });
    assert.equal(closed.status, 200, closed.text);
    assert.equal(closed.body.status, 'closed');
    assert.ok(closed.body.updated_at > c.updated_at);
    assert.equal(closed.body.created_at, c.created_at);
    assert.equal((await patch({ status: 'open' })).body.status, 'open');
    assert.equal((await patch({ status: 'closed' })).body.status, 'closed');
    assert.equal((await patch({ status: 'archived' })).body.status, 'archived');
    for (const json of [{ status: 'open' }, { status: 'closed' }, { title: 'renamed' }, { description: 'more' }]) {
      const r = await patch(json);
      assert.equal(r.status, 409, JSON.stringify(json));
      assert.equal(r.body.error.code, 'conflict');
    }
    // Setting what already holds is no change, hence no conflict.
    assert.equal((await patch({ status: 'archived' })).status, 200);
    const file = await upload();
    const attach = await s.request('POST', `/cases/${c.id}/attachments`, { json: { file_id: file.id } });
    assert.equal(attach.status, 409);
    assert.equal((await s.request('GET', `/cases/${c.id}`)).body.status, 'archived');
  });

  test('PATCH /cases/{id}: title and description; 400 for bad bodies; 404 for unknown ids', async () => {
    const { body: c } = await create({ title: 'before', description: 'd' });
    const r = await s.request('PATCH', `/cases/${c.id}`, { json: { title: 'after', description: '' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.title, 'after');
    assert.equal(r.body.description, '');
    assert.equal(r.body.status, 'open');
    for (const json of [{}, { title: '' }, { status: 'deleted' }, { status: 1 }]) {
      const bad = await s.request('PATCH', `/cases/${c.id}`, { json });
      assert.equal(bad.status, 400, JSON.stringify(json));
      assert.equal(bad.body.error.code, 'bad_request');
    }
    const missing = await s.request('PATCH', '/cases/cas_01J00000000000000000000000', { json: { title: 'x' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    assert.equal((await s.request('GET', '/cases/cas_01J00000000000000000000000')).status, 404);
  });

  test('attachments: File objects of the project; same file twice → attached once; unknown or deleted → 404', async () => {
    const { body: c } = await create({ title: 'evidence' });
    const f1 = await upload();
    const f2 = await upload();
    const attach = (fileId: string, caseId = c.id) => s.request('POST', `/cases/${caseId}/attachments`, { json: { file_id: fileId } });
    const r1 = await attach(f1.id);
    assert.equal(r1.status, 200, r1.text);
    assert.equal(r1.body.attachments.length, 1);
    const media = await s.request('GET', `/media/${f1.id}`);
    assert.deepEqual(r1.body.attachments[0], media.body, 'an attachment is the File object');
    assert.equal((await attach(f1.id)).body.attachments.length, 1, 'the same file twice is attached once');
    const r2 = await attach(f2.id);
    assert.deepEqual(r2.body.attachments.map((f: { id: string }) => f.id), [f1.id, f2.id]);
    assert.deepEqual((await s.request('GET', `/cases/${c.id}`)).body.attachments.map((f: { id: string }) => f.id), [f1.id, f2.id]);

    const unknown = await attach('f_01J00000000000000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'not_found');
    assert.equal((await attach(f1.id, 'cas_01J00000000000000000000000')).status, 404);
    for (const json of [{}, { file_id: '' }, { file_id: null }]) {
      const bad = await s.request('POST', `/cases/${c.id}/attachments`, { json });
      assert.equal(bad.status, 400, JSON.stringify(json));
    }

    // Deleting the media file removes it from the case's attachments (and it cannot be attached again).
    assert.equal((await s.request('DELETE', `/media/${f1.id}`)).status, 200);
    assert.deepEqual((await s.request('GET', `/cases/${c.id}`)).body.attachments.map((f: { id: string }) => f.id), [f2.id]);
    const list = await s.request('GET', '/cases?limit=100');
    const listed = list.body.cases.find((x: { id: string }) => x.id === c.id);
    assert.deepEqual(listed.attachments.map((f: { id: string }) => f.id), [f2.id]);
    const deleted = await attach(f1.id);
    assert.equal(deleted.status, 404);
  });

  test('attachments: files of another project, mode or organisation are 404', async () => {
    const { body: c } = await create({ title: 'foreign files' });
    for (const [what, tenant] of others) {
      const foreign = await upload(tenant.token);
      const r = await s.request('POST', `/cases/${c.id}/attachments`, { json: { file_id: foreign.id } });
      assert.equal(r.status, 404, what);
      assert.equal(r.body.error.code, 'not_found');
    }
    assert.deepEqual((await s.request('GET', `/cases/${c.id}`)).body.attachments, []);
  });

  test('GET /cases: newest first, limit and cursor, status filter, 400 for bad limit, cursor or status', async () => {
    const token = s.tenants.aTest.token; // a tenant of its own, so the counts are exact
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await create({ title: `c${i}` }, token)).body.id);
      s.clock.advance(1);
    }
    await s.request('PATCH', `/cases/${made[1]}`, { token, json: { status: 'closed' } });
    await s.request('PATCH', `/cases/${made[3]}`, { token, json: { status: 'closed' } });

    const seen: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const r = await s.request('GET', `/cases?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      assert.equal(r.status, 200, r.text);
      seen.push(...r.body.cases.map((c: { id: string }) => c.id));
      assert.equal(r.body.has_more, r.body.next_cursor !== '');
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...made].reverse());

    const closed = await s.request('GET', '/cases?status=closed', { token });
    assert.deepEqual(closed.body.cases.map((c: { id: string }) => c.id), [made[3], made[1]]);
    assert.equal(closed.body.has_more, false);
    assert.equal(closed.body.next_cursor, '');
    const open = await s.request('GET', '/cases?status=open&limit=2', { token });
    assert.deepEqual(open.body.cases.map((c: { id: string }) => c.id), [made[4], made[2]]);
    assert.equal(open.body.has_more, true);
    const openNext = await s.request('GET', `/cases?status=open&limit=2&cursor=${encodeURIComponent(open.body.next_cursor)}`, { token });
    assert.deepEqual(openNext.body.cases.map((c: { id: string }) => c.id), [made[0]]);
    // A cursor of the status=open list does not continue another list.
    assert.equal((await s.request('GET', `/cases?status=closed&cursor=${encodeURIComponent(open.body.next_cursor)}`, { token })).status, 400);
    assert.deepEqual((await s.request('GET', '/cases?status=archived', { token })).body.cases, []);

    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'status=deleted', 'cursor=garbage', `cursor=${encodeURIComponent(open.body.next_cursor)}x`]) {
      const r = await s.request('GET', `/cases?${q}`, { token });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'bad_request');
    }
  });

  test('tenant matrix: another org, project or mode sees none of the cases and cannot use their cursors', async () => {
    const { body: c } = await create({ title: 'private' });
    await create({ title: 'private 2' });
    const first = await s.request('GET', '/cases?limit=1');
    assert.ok(first.body.next_cursor);
    for (const [what, tenant] of others) {
      const token = tenant.token;
      assert.equal((await s.request('GET', `/cases/${c.id}`, { token })).status, 404, what);
      const patch = await s.request('PATCH', `/cases/${c.id}`, { token, json: { status: 'closed' } });
      assert.equal(patch.status, 404, what);
      assert.equal(patch.body.error.code, 'not_found');
      const file = await upload(token);
      assert.equal((await s.request('POST', `/cases/${c.id}/attachments`, { token, json: { file_id: file.id } })).status, 404, what);
      const list = await s.request('GET', '/cases?limit=100', { token });
      assert.equal(list.status, 200);
      assert.ok(!list.body.cases.some((x: { id: string }) => x.id === c.id), what);
      const cursor = await s.request('GET', `/cases?cursor=${encodeURIComponent(first.body.next_cursor)}`, { token });
      assert.equal(cursor.status, 400, what);
      assert.equal(cursor.body.error.code, 'bad_request');
    }
    // Nothing changed for the owner.
    const mine = await s.request('GET', `/cases/${c.id}`);
    assert.equal(mine.body.status, 'open');
    assert.deepEqual(mine.body.attachments, []);
  });

  test('scopes: cases:read for reads, cases:write for writes; 401 without a token', async () => {
    const { body: c } = await create({ title: 'scoped' });
    const readOnly = await s.token(s.tenants.a, ['cases:read']);
    const writeOnly = await s.token(s.tenants.a, ['cases:write']);
    const calls: Array<[string, string, unknown, string]> = [
      ['POST', '/cases', { title: 'x' }, 'cases:write'],
      ['GET', '/cases', undefined, 'cases:read'],
      ['GET', `/cases/${c.id}`, undefined, 'cases:read'],
      ['PATCH', `/cases/${c.id}`, { title: 'y' }, 'cases:write'],
      ['POST', `/cases/${c.id}/attachments`, { file_id: 'f_x' }, 'cases:write'],
    ];
    for (const [method, path, json, scope] of calls) {
      const r = await s.request(method, path, { token: scope === 'cases:read' ? writeOnly : readOnly, json });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.body.error.required_scope, scope);
      const anonymous = await s.request(method, path, { token: null, json });
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer');
    }
    assert.equal((await s.request('GET', `/cases/${c.id}`, { token: readOnly })).status, 200);
    assert.equal((await s.request('POST', '/cases', { token: writeOnly, json: { title: 'w' } })).status, 201);
  });
});
