import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { ChannelService } from './channel-service.js';
import { eventually } from '../test-support/notifications/test-receiver.js';
import { leakedMetadata, startMetadataServer } from '../test-support/metadata-server.js';

const discordUrl = 'https://discord.com/api/webhooks/123456789/abcdefSECRETxyz9';

describe('channels (private addresses allowed)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' } });
  });
  after(() => s.close());

  test('POST /channels (webhook) → 201 with its signing secret once; GET never shows it', async () => {
    const created = await s.request('POST', '/channels', { json: { name: 'ops hook', kind: 'webhook', url: 'http://127.0.0.1:9/hook' } });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.id, /^ch_[0-9A-Z]{26}$/);
    assert.match(created.body.signing_secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.body.enabled, true);
    assert.equal(created.body.disabled_reason, null);
    const got = await s.request('GET', `/channels/${created.body.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.url, 'http://127.0.0.1:9/hook');
    assert.ok(!got.text.includes(created.body.signing_secret));
    const list = await s.request('GET', '/channels');
    assert.ok(!list.text.includes(created.body.signing_secret));
    assert.ok(!s.logs.some((line) => line.includes(created.body.signing_secret)), 'the secret is never logged');
  });

  test('Discord and Slack URLs are secrets: masked in the answer, GET and the list', async () => {
    const created = await s.request('POST', '/channels', { json: { name: 'discord', kind: 'discord', url: discordUrl } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.signing_secret, undefined);
    assert.equal(created.body.url, 'https://discord.com/****xyz9');
    const got = await s.request('GET', `/channels/${created.body.id}`);
    assert.equal(got.body.url, 'https://discord.com/****xyz9');
    const list = await s.request('GET', '/channels?limit=100');
    assert.ok(!list.text.includes('SECRET'));
    const slack = await s.request('POST', '/channels', { json: { name: 'slack', kind: 'slack', url: 'https://hooks.slack.com/services/T0/B0/slackSECRET' } });
    assert.ok(!slack.text.includes('slackSECRET'));
  });

  test('PATCH renames, changes the URL, disables and re-enables; DELETE removes', async () => {
    const { body: channel } = await s.request('POST', '/channels', { json: { name: 'a', kind: 'webhook', url: 'http://127.0.0.1:9/a' } });
    const renamed = await s.request('PATCH', `/channels/${channel.id}`, { json: { name: 'b', url: 'https://127.0.0.1:9/b' } });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.name, 'b');
    assert.equal(renamed.body.url, 'https://127.0.0.1:9/b');
    const off = await s.request('PATCH', `/channels/${channel.id}`, { json: { enabled: false } });
    assert.equal(off.body.enabled, false);
    assert.equal(off.body.disabled_reason, 'disabled by a user');
    assert.equal((await s.request('POST', `/channels/${channel.id}/test`)).status, 409);
    const on = await s.request('PATCH', `/channels/${channel.id}`, { json: { enabled: true } });
    assert.equal(on.body.enabled, true);
    assert.equal(on.body.disabled_reason, null);
    assert.deepEqual((await s.request('DELETE', `/channels/${channel.id}`)).body, { id: channel.id, deleted: true });
    assert.equal((await s.request('GET', `/channels/${channel.id}`)).status, 404);
    assert.equal((await s.request('DELETE', `/channels/${channel.id}`)).status, 404);
  });

  test('the list is newest first in cursor pages; a foreign cursor → 400', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await s.request('POST', '/channels', { token: s.tenants.aOther.token, json: { name: `p${i}`, kind: 'webhook', url: 'http://127.0.0.1:9/' } })).body.id);
    const first = await s.request('GET', '/channels?limit=2', { token: s.tenants.aOther.token });
    assert.deepEqual(first.body.channels.map((c: { id: string }) => c.id), [ids[2], ids[1]]);
    assert.equal(first.body.has_more, true);
    const second = await s.request('GET', `/channels?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: s.tenants.aOther.token });
    assert.deepEqual(second.body.channels.map((c: { id: string }) => c.id), [ids[0]]);
    assert.equal(second.body.next_cursor, '');
    assert.equal((await s.request('GET', `/channels?cursor=${encodeURIComponent(first.body.next_cursor)}`)).status, 400);
    assert.equal((await s.request('GET', '/channels?limit=0')).status, 400);
    assert.equal((await s.request('GET', '/channels?limit=101')).status, 400);
  });

  test("tenant matrix: another project's, mode's or organisation's channel and its deliveries are not_found", async () => {
    const { body: mine } = await s.request('POST', '/channels', { json: { name: 'mine', kind: 'webhook', url: 'http://127.0.0.1:9/' } });
    for (const other of [s.tenants.aOther, s.tenants.aTest, s.tenants.b]) {
      for (const [method, path] of [
        ['GET', `/channels/${mine.id}`],
        ['PATCH', `/channels/${mine.id}`],
        ['DELETE', `/channels/${mine.id}`],
        ['POST', `/channels/${mine.id}/test`],
        ['GET', `/channels/${mine.id}/deliveries`],
      ] as const) {
        const r = await s.request(method, path, { token: other.token, ...(method === 'PATCH' ? { json: { name: 'stolen' } } : {}) });
        assert.equal(r.status, 404, `${method} ${path} as another tenant`);
        assert.equal(r.body.error.code, 'not_found');
      }
      const list = await s.request('GET', '/channels?limit=100', { token: other.token });
      assert.ok(!list.body.channels.some((c: { id: string }) => c.id === mine.id));
    }
    assert.equal((await s.request('GET', `/channels/${mine.id}`)).body.name, 'mine');
  });

  test('bad input: every field out of range → 400 naming the field; a non-http(s) URL → 400', async () => {
    const cases: Array<[unknown, string]> = [
      [{ kind: 'webhook', url: 'http://127.0.0.1/' }, 'name'],
      [{ name: '', kind: 'webhook', url: 'http://127.0.0.1/' }, 'name'],
      [{ name: 'x'.repeat(101), kind: 'webhook', url: 'http://127.0.0.1/' }, 'name'],
      [{ name: 7, kind: 'webhook', url: 'http://127.0.0.1/' }, 'name'],
      [{ name: 'n', kind: 'teams', url: 'http://127.0.0.1/' }, 'kind'],
      [{ name: 'n', url: 'http://127.0.0.1/' }, 'kind'],
      [{ name: 'n', kind: 'webhook' }, 'url'],
      [{ name: 'n', kind: 'webhook', url: '' }, 'url'],
      [{ name: 'n', kind: 'webhook', url: `http://127.0.0.1/${'a'.repeat(2048)}` }, 'url'],
      [{ name: 'n', kind: 'webhook', url: 'ftp://127.0.0.1/x' }, 'url'],
      [{ name: 'n', kind: 'webhook', url: 'file:///etc/passwd' }, 'url'],
      [{ name: 'n', kind: 'webhook', url: 'javascript:alert(1)' }, 'url'],
      [{ name: 'n', kind: 'webhook', url: 'not a url' }, 'url'],
      [{ name: 'n', kind: 'webhook', url: 'http://user:pw@127.0.0.1/' }, 'url'],
      [{ name: 'n', kind: 'webhook', url: 'http://127.0.0.1/', extra: 1 }, 'extra'],
    ];
    for (const [json, field] of cases) {
      const r = await s.request('POST', '/channels', { json });
      assert.equal(r.status, 400, `${JSON.stringify(json).slice(0, 80)}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_request');
      assert.match(r.body.error.message, new RegExp(`"${field}"`), `${JSON.stringify(json).slice(0, 80)}: ${r.body.error.message}`);
    }
    const { body: channel } = await s.request('POST', '/channels', { json: { name: 'ok', kind: 'webhook', url: 'http://127.0.0.1:9/' } });
    for (const [json, field] of [
      [{ name: '' }, 'name'],
      [{ url: 'gopher://x' }, 'url'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ kind: 'slack' }, 'kind'],
    ] as const) {
      const r = await s.request('PATCH', `/channels/${channel.id}`, { json });
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.error.message, new RegExp(`"${field}"`));
    }
  });

  test('scopes: a Viewer-like token (monitors:read) reads but cannot write (403 naming monitors:write); no monitors scope → 403', async () => {
    const reader = await s.token(s.tenants.a, ['monitors:read']);
    assert.equal((await s.request('GET', '/channels', { token: reader })).status, 200);
    const write = await s.request('POST', '/channels', { token: reader, json: { name: 'x', kind: 'webhook', url: 'http://127.0.0.1:9/' } });
    assert.equal(write.status, 403);
    assert.equal(write.body.error.required_scope, 'monitors:write');
    const none = await s.token(s.tenants.a, ['logs:read']);
    const read = await s.request('GET', '/channels', { token: none });
    assert.equal(read.status, 403);
    assert.equal(read.body.error.required_scope, 'monitors:read');
  });

  test('OpenAPI lists the channel endpoints and the monitors scopes', async () => {
    const doc = (await s.request('GET', '/openapi.json')).body;
    assert.ok(doc.paths['/v1/channels'].post);
    assert.ok(doc.paths['/v1/channels/{id}/test'].post);
    assert.ok(doc.paths['/v1/channels/{id}/deliveries'].get);
    const scopeEnum = JSON.stringify(doc.paths['/v1/tokens'].post.requestBody);
    assert.ok(scopeEnum.includes('monitors:read') && scopeEnum.includes('monitors:write'));
  });
});

describe('channels: SSRF without OPS_OUTBOUND_ALLOW_PRIVATE', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  for (const url of [
    'http://127.0.0.1/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.10/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'http://[fd00:ec2::254]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    'http://localhost:8080/hook',
    'http://2130706433/',
  ]) {
    test(`${url} is refused (bad_request naming url)`, async () => {
      const r = await s.request('POST', '/channels', { json: { name: 'x', kind: 'webhook', url } });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'bad_request');
      assert.match(r.body.error.message, /"url"/);
      for (const kind of ['discord', 'slack']) {
        const other = await s.request('POST', '/channels', { json: { name: 'x', kind, url } });
        assert.equal(other.status, 400, `${kind}: ${other.text}`);
        assert.equal(other.body.error.field, 'url');
      }
    });
  }

  test('PATCH to a private URL is refused as well; the channel keeps its URL', async () => {
    const lenient = new ChannelService(s.server.ctx.metadata.db, s.clock, true);
    const channel = await lenient.create(s.tenants.a, { name: 'public', kind: 'slack', url: 'https://hooks.slack.com/services/T0/B0/abcdSECRET' });
    const patch = await s.request('PATCH', `/channels/${channel.id}`, { json: { url: 'http://169.254.169.254/latest/meta-data/' } });
    assert.equal(patch.status, 400, patch.text);
    assert.match(patch.body.error.message, /field "url" is refused: 169\.254\.169\.254 is a link-local address \(cloud metadata\)/);
  });

  for (const kind of ['webhook', 'discord', 'slack'] as const) {
    test(`every connection is checked again: a stored ${kind} channel whose address is (now) the metadata service gets no request, its delivery fails naming the address`, async () => {
      const meta = await startMetadataServer();
      try {
        // As if the host resolved to a public address when the channel was made.
        const lenient = new ChannelService(s.server.ctx.metadata.db, s.clock, true);
        const channel = await lenient.create(s.tenants.a, { name: `rebound ${kind}`, kind, url: `${meta.url}/latest/meta-data/` });
        assert.equal((await s.request('POST', `/channels/${channel.id}/test`)).status, 202);
        const [delivery] = await eventually(
          async () => (await s.request('GET', `/channels/${channel.id}/deliveries`)).body.deliveries,
          (list: Array<{ state: string; last_error: string | null; attempts: Array<{ status: number | null }> }>) => list.length === 1 && list[0]!.state !== 'pending',
        );
        assert.equal(delivery!.state, 'failed');
        assert.equal(delivery!.last_error, 'address refused for 127.0.0.1: 127.0.0.1 is a loopback address');
        assert.deepEqual(meta.hits, []);
        const listed = await s.request('GET', `/channels/${channel.id}/deliveries`);
        assert.deepEqual(leakedMetadata(listed.text), []);
      } finally {
        await meta.close();
      }
    });
  }
});
