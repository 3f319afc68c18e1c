import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import { badRequest } from '../../errors/app-error.js';
import { datasetNamePattern } from '../../events/dataset-service.js';
import { bodyFormat, parseJsonBody, parseNdjson } from './ndjson.js';
import { contentEncodingHeader, rawBodyScope } from '../core/wire-body.js';
import { insertRequest, type Inserter } from '../core/insert.js';

const IngestResult = Type.Object({
  ingested: Type.Integer(),
  failed: Type.Integer(),
  failures: Type.Array(
    Type.Object({ index: Type.Integer(), error: Type.Object({ code: Type.String(), message: Type.String() }) }),
  ),
});

/** One event as sent (DECISIONS §9); documented only, the handler checks each event itself. */
const IngestEvent = Type.Object(
  {
    ts: Type.Optional(Type.Union([Type.String({ description: 'ISO 8601 date-time' }), Type.Integer({ minimum: 0, description: 'epoch milliseconds' })], { description: 'Default: now.' })),
    severity: Type.Optional(
      Type.Union([Type.String({ examples: ['info'] }), Type.Integer({ minimum: 0, maximum: 24 })], {
        description: 'debug, info, warn, error, fatal (any case), an alias (warning, critical, notice…) or an OpenTelemetry severity number. Default: default_severity of the dataset.',
      }),
    ),
    event: Type.Optional(Type.String()),
    actor: Type.Optional(Type.String()),
    source: Type.Optional(Type.String()),
    message: Type.Optional(Type.String()),
    payload: Type.Optional(Type.Object({}, { additionalProperties: true })),
    event_id: Type.Optional(Type.String({ format: 'uuid', description: 'A retried event with the same id is stored once.' })),
  },
  {
    additionalProperties: true,
    description:
      'An event. Where ts, severity or message is absent, an alias holding a value it takes is read instead (ts ← @timestamp, timestamp, time; ' +
      'severity ← level, log.level, log.level nested in log, with pino and bunyan numeric levels; message ← msg). Other top-level keys move into payload. ' +
      'See docs/shippers.md, "Mapping".',
  },
);

/** POST /datasets/{name}/ingest (DECISIONS §9), in its own scope for its raw body parser. */
export async function registerIngestRoute(v1: Api, inserter: Inserter): Promise<void> {
  await v1.register(async (scope: Api) => {
    rawBodyScope(scope, '*');
    scope.post(
      '/datasets/:name/ingest',
      {
        config: { scope: 'logs:write', idempotency: 'body' },
        schema: {
          tags: ['datasets'],
          summary: 'Ingest events: a JSON array, one JSON object, or NDJSON; gzip accepted',
          description:
            'Answered once the events are durable. Bad events fail alone, by index. Limits: 10 MB body after decompression, ' +
            '10,000 events, 256 KB per event; a payload at most 32 levels deep with at most 1,000 keys. The first stored event creates the dataset (a refused request, or one whose every event fails, creates none); past the plan cap events go to `default`.',
          params: Type.Object({ name: Type.String({ pattern: datasetNamePattern }) }),
          // Documented only: the raw body is read by this scope's parser (gzip, limits) and
          // parsed event by event in the handler, so one bad event fails alone, never by Ajv.
          unvalidated: {
            body: {
              content: {
                'application/json': {
                  schema: Type.Union([Type.Array(IngestEvent, { maxItems: 10_000 }), IngestEvent], {
                    description: 'An array of events, or one event.',
                  }),
                },
                'application/x-ndjson': { schema: Type.String({ description: 'One JSON event per line.' }) },
              },
            },
            headers: Type.Object({ 'Content-Encoding': contentEncodingHeader }),
          },
          response: { 200: IngestResult },
        },
      },
      async (request) => {
        const by = insertRequest(request);
        const format = bodyFormat(request.headers['content-type']);
        const body = request.body;
        if (!Buffer.isBuffer(body) || body.length === 0) throw badRequest('the request body holds no events');
        const name = request.params.name;
        // The dataset is created (if new) only with the first event stored: a body refused here
        // (not JSON, too many events, past the quota) leaves none behind.
        const parsed = await inserter.insertEvents(by, [name], (defaults) => {
          const d = defaults(name);
          return format === 'ndjson' ? parseNdjson(body, d) : parseJsonBody(body, d);
        });
        return { ingested: parsed.events.length, failed: parsed.failures.length, failures: parsed.failures };
      },
    );
  });
}
