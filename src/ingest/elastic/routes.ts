import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../../http/types.js';
import { decodeWith, rawBodyScope } from '../core/wire-body.js';
import { insertRequest, type IngestItem, type Inserter } from '../core/insert.js';
import { bulkAnswer, clusterInfo, elasticError, elasticErrorBody, elasticProductHeader } from './answers.js';
import { BulkEmpty, BulkTooLarge, parseBulk } from './bulk-parse.js';
import { toShippedEvent } from './mapping.js';

const config = { scope: 'logs:write' } as const;
const tags = ['shippers'];
const Anything = Type.Object({}, { additionalProperties: true });
const acknowledged = { acknowledged: true };

const BulkAnswer = Type.Object(
  {
    took: Type.Integer(),
    errors: Type.Boolean(),
    items: Type.Array(Type.Record(Type.String(), Type.Object({}, { additionalProperties: true }))),
  },
  { description: "Elasticsearch's bulk answer: one item per action, in order, keyed by the action's name" },
);

/**
 * The start-up calls Filebeat, Logstash, Vector and the official clients make besides `_bulk`
 * (docs/shippers.md lists them): each answers what lets the shipper go on to send. Templates,
 * ILM policies and indexes are accepted and ignored: datasets need none.
 */
function registerStartupCalls(scope: Api): void {
  const hide = { hide: true, tags };
  scope.get('/elastic/_license', { config, schema: hide }, async () => ({
    license: { status: 'active', uid: 'opsplatform', type: 'basic', issue_date_in_millis: 0, max_nodes: 1000, issued_to: 'opsplatform', issuer: 'opsplatform' },
  }));
  scope.get('/elastic/_xpack', { config, schema: hide }, async () => ({
    build: {},
    license: { status: 'active', type: 'basic', mode: 'basic', uid: 'opsplatform' },
    features: { ilm: { available: false, enabled: false }, security: { available: true, enabled: true } },
  }));
  scope.get('/elastic/_cluster/health', { config, schema: hide }, async () => ({ cluster_name: 'opsplatform', status: 'green', number_of_nodes: 1, number_of_data_nodes: 1 }));
  scope.get('/elastic/_nodes', { config, schema: hide }, async () => ({ _nodes: { total: 1, successful: 1, failed: 0 }, cluster_name: 'opsplatform', nodes: {} }));
  scope.get('/elastic/_nodes/*', { config, schema: hide }, async () => ({ _nodes: { total: 1, successful: 1, failed: 0 }, cluster_name: 'opsplatform', nodes: {} }));
  for (const kind of ['_index_template', '_template', '_component_template', '_ilm/policy']) {
    // GET/HEAD answer "exists" so a shipper does not try to install one; PUT is acknowledged.
    scope.get(`/elastic/${kind}/:name`, { config, schema: hide }, async () => ({}));
    scope.put(`/elastic/${kind}/:name`, { config, schema: hide }, async () => acknowledged);
  }
  scope.put('/elastic/:index', { config, schema: hide }, async (request) => ({ ...acknowledged, shards_acknowledged: true, index: (request.params as { index: string }).index }));
  const refreshed = async () => ({ _shards: { total: 1, successful: 1, failed: 0 } });
  scope.post('/elastic/_refresh', { config, schema: hide }, refreshed);
  scope.post('/elastic/:index/_refresh', { config, schema: hide }, refreshed);
  scope.get('/elastic/:index/_refresh', { config, schema: hide }, refreshed);
}

/**
 * Elasticsearch's bulk API under /v1/elastic (DECISIONS §21), so a shipper's Elasticsearch URL is
 * `{base_url}/elastic`. In its own scope: the raw body reader (gzip, the 10 MB limit after
 * decompression), `X-Elastic-Product` and Elasticsearch-shaped errors apply here only.
 */
export async function registerElasticRoutes(v1: Api, inserter: Inserter): Promise<void> {
  await v1.register(async (scope: Api) => {
    rawBodyScope(scope, '*', elasticErrorBody);
    scope.addHook('onSend', elasticProductHeader);

    for (const url of ['/elastic', '/elastic/']) {
      scope.get(
        url,
        {
          config,
          schema: {
            // Documented once, without the trailing slash clients also send.
            hide: url === '/elastic/',
            operationId: url === '/elastic/' ? undefined : 'elasticInfo',
            tags,
            summary: 'Elasticsearch cluster info (GET and HEAD): what clients check before they send',
            description: `Answers as Elasticsearch 8 does (a version number, \`X-Elastic-Product: Elasticsearch\`), so Filebeat, Vector, Logstash and the official clients proceed. See docs/shippers.md.`,
            response: { 200: Anything },
          },
        },
        async () => clusterInfo(),
      );
    }

    const bulk = {
      config: { ...config, idempotency: 'body' as const },
      schema: {
        tags,
        summary: "Elasticsearch bulk API: index and create actions, one per document; what Filebeat, Fluent Bit, Vector, Logstash, syslog-ng's elasticsearch-http(), pino-elasticsearch and the official client's bulk helper send",
        description:
          'NDJSON: an action line (`{"index":{"_index":"games","_id":"…"}}` or `create`), then the document. The index is the dataset ' +
          '(the URL\'s `{index}` when the action names none); the document is mapped as native ingest maps an NDJSON line (ts, severity, ' +
          'event, actor, source, message, event_id and their aliases such as `@timestamp`, `log.level`, `msg` to the event, the rest to the ' +
          'payload); `_id` is the event\'s client id where the document has no event_id, so a retried bulk is stored once. A bad line, ' +
          'an unknown action or a document that breaks a limit fails as its own item (Elasticsearch\'s error shape); the others are stored. ' +
          'Authorization: Bearer, Basic with the token as the password, or ApiKey. Limits: 10 MB body after decompression, 10,000 actions.',
        unvalidated: {
          body: { content: { 'application/x-ndjson': { schema: Type.String({ description: 'action and document lines' }) } } },
        },
        response: { 200: BulkAnswer },
      },
    };
    const handle = async (request: FastifyRequest, reply: FastifyReply) => {
      const by = insertRequest(request);
      const started = performance.now();
      const urlIndex = (request.params as { index?: string }).index;
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const items = decodeWith(() => parseBulk(body, urlIndex), { bad: [BulkEmpty], over: [BulkTooLarge] });
      const shipped: IngestItem[] = [];
      const positions: number[] = [];
      items.forEach((item, i) => {
        if (item.error || !item.document) return;
        shipped.push(toShippedEvent(item.index, item.id, item.document, item.bytes));
        // The answer needs the item but not its document (kept, it would outlive the durability wait).
        item.document = undefined;
        positions.push(i);
      });
      const result = await inserter.insertItems(by, shipped);
      for (const failure of result.failures) {
        const type = failure.code === 'conflict' ? 'index_closed_exception' : failure.message.includes('dataset name') ? 'invalid_index_name_exception' : 'document_parsing_exception';
        items[positions[failure.index]!]!.error = { status: failure.status, type, reason: failure.message };
      }
      const eventIds: Array<string | undefined> = [];
      positions.forEach((position, i) => (eventIds[position] = result.eventIds[i]));
      return reply.type('application/json; charset=utf-8').send(bulkAnswer(items, eventIds, Math.round(performance.now() - started)));
    };
    scope.post('/elastic/_bulk', { ...bulk, schema: { ...bulk.schema, operationId: 'elasticBulk' } }, handle);
    scope.post('/elastic/:index/_bulk', { ...bulk, schema: { ...bulk.schema, operationId: 'elasticIndexBulk', params: Type.Object({ index: Type.String() }) } }, handle);
    registerStartupCalls(scope);

    // Anything else under /v1/elastic: Elasticsearch's shape, so a client reports what it called.
    scope.all('/elastic/*', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      const reason = `no handler found for uri [${request.url.split('?')[0]!.replace(/^\/v1\/elastic/, '')}] and method [${request.method}]: opsplatform answers only the bulk API and the calls shippers make at start-up (docs/shippers.md)`;
      return reply.code(404).type('application/json; charset=utf-8').send(JSON.stringify(elasticError(404, 'resource_not_found_exception', reason, { code: 'not_found', request_id: request.id })));
    });
  });
}
