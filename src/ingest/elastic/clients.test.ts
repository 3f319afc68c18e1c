import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Client, errors } from '@elastic/elasticsearch';
import pino from 'pino';
import pinoElasticModule from 'pino-elasticsearch';
import { startTestServer, type TestServer } from '../../test-support/test-server.js';
import { distinctMessages, query, severityCounts } from '../../test-support/ingest/test-queries.js';

// A CommonJS module whose typings say `export default`: at run time the default import is the function itself.
const pinoElastic = pinoElasticModule as unknown as typeof pinoElasticModule.default;
const documents = 10_000;
const levels = ['info', 'warn', 'error', 'debug'] as const;
const at = Date.parse('2026-11-21T17:19:00.123Z');

describe('Elasticsearch clients send to /v1/elastic, unmodified', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test("@elastic/elasticsearch 8's helpers.bulk (ApiKey; it checks X-Elastic-Product): 10,000 documents queryable; the same bulk again is stored once", async () => {
    const client = new Client({ node: `${s.baseUrl}/elastic`, auth: { apiKey: s.tenants.a.token } });
    const info = await client.info();
    assert.match(info.version.number, /^8\./);
    const docs = Array.from({ length: documents }, (_, i) => ({
      id: `match-${i}`,
      '@timestamp': new Date(at + i).toISOString(),
      'log.level': levels[i % 4],
      message: `bulk line ${i}`,
      match: { id: i, map: 'mirage' },
    }));
    for (let run = 0; run < 2; run++) {
      const stats = await client.helpers.bulk({
        datasource: docs,
        flushBytes: 2_000_000,
        onDocument: ({ id }) => ({ create: { _index: 'es-bulk', _id: id } }),
        onDrop: (dropped) => assert.fail(`dropped ${JSON.stringify(dropped).slice(0, 300)}`),
      });
      assert.deepEqual([stats.total, stats.successful, stats.failed], [documents, documents, 0]);
    }
    assert.equal(await distinctMessages(s, 'es-bulk'), documents);
    assert.deepEqual(await severityCounts(s, 'es-bulk'), { info: 2500, warn: 2500, error: 2500, debug: 2500 });
    const [e] = (await query(s, 'dataset:es-bulk AND message:"bulk line 4001"')).events;
    assert.equal(e?.ts, new Date(at + 4001).toISOString());
    assert.equal(e?.severity, 'warn');
    assert.deepEqual(e?.payload, { id: 'match-4001', match: { id: 4001, map: 'mirage' } });
    await client.close();
  });

  test('the official client reports a wrong token as an authentication failure (401, security_exception)', async () => {
    const client = new Client({ node: `${s.baseUrl}/elastic`, auth: { username: 'elastic', password: 'ops_live_not_a_real_token_0000000000000000000000' } });
    await assert.rejects(client.info(), (error: unknown) => {
      assert.ok(error instanceof errors.ResponseError, String(error));
      assert.equal(error.statusCode, 401);
      assert.equal((error.body as { error: { type: string } }).error.type, 'security_exception');
      return true;
    });
    await client.close();
  });

  test('pino-elasticsearch (Basic auth): 10,000 lines queryable with ts, severity from pino levels, message and payload', async () => {
    const stream = pinoElastic({
      node: `${s.baseUrl}/elastic`,
      index: 'pino-es',
      auth: { username: 'pino', password: s.tenants.a.token },
      flushBytes: 1_000_000,
      flushInterval: 50,
    });
    const failures: unknown[] = [];
    stream.on('insertError', (error: unknown) => failures.push(error));
    stream.on('error', (error: unknown) => failures.push(error));
    const inserted = once(stream, 'insert');
    const logger = pino({ level: 'debug', base: { hostname: 'game-2' }, timestamp: () => `,"time":${at}` }, stream);
    for (let i = 0; i < documents; i++) logger[levels[i % 4]!]({ player: { id: i } }, `pino es line ${i}`);
    stream.end();
    const [stats] = (await inserted) as [{ total: number; successful: number; failed: number }];
    assert.deepEqual(failures, []);
    assert.deepEqual([stats.total, stats.successful, stats.failed], [documents, documents, 0]);
    assert.equal(await distinctMessages(s, 'pino-es'), documents);
    assert.deepEqual(await severityCounts(s, 'pino-es'), { info: 2500, warn: 2500, error: 2500, debug: 2500 });
    const [e] = (await query(s, 'dataset:pino-es AND message:"pino es line 4002"')).events;
    assert.equal(e?.ts, new Date(at).toISOString());
    assert.equal(e?.severity, 'error');
    const payload = e?.payload as Record<string, unknown>;
    assert.deepEqual(payload.player, { id: 4002 });
    assert.equal(payload.hostname, 'game-2');
  });
});
