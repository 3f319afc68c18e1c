import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../../http/types.js';
import { AppError, badRequest } from '../../errors/app-error.js';
import { contentEncodingHeader, decodeWith, mediaType, rawBodyScope, type ErrorEnvelope } from '../core/wire-body.js';
import { insertRequest, type Inserter, type ItemFailure } from '../core/insert.js';
import { BadPush, decodeJsonPush, decodeProtobufPush, PushTooLarge, type LokiStream } from './decode.js';
import { toShippedEvents } from './mapping.js';

const protobufType = 'application/x-protobuf';
const jsonType = 'application/json';
const shownFailures = 5;

/**
 * Loki answers its errors as plain text (`http.Error`), and its clients print that text: the
 * error envelope the error handler wrote (DECISIONS §5) becomes one line, same status and
 * headers, still naming our code and the request id.
 */
function plainTextError(error: ErrorEnvelope, _request: FastifyRequest, reply: FastifyReply): string {
  reply.type('text/plain; charset=utf-8');
  return `${String(error.message)} (${String(error.code)}, request id ${String(error.request_id)})\n`;
}

function decode(request: FastifyRequest, body: Buffer): LokiStream[] {
  const type = mediaType(request);
  const errors = { bad: [BadPush], over: [PushTooLarge] };
  if (type === jsonType) return decodeWith(() => decodeJsonPush(body), errors);
  if (type === protobufType || type === '') return decodeWith(() => decodeProtobufPush(body), errors);
  throw new AppError('unsupported_type', `content type ${type} is not accepted here; send ${protobufType} (snappy-compressed) or ${jsonType}`);
}

/** Loki's way with lines it refuses: 400 naming them, the other lines stored. */
function describe(failures: ItemFailure[], total: number): string {
  const shown = failures.slice(0, shownFailures).map((f) => `line ${f.index}: ${f.message}`);
  const more = failures.length > shownFailures ? `; and ${failures.length - shownFailures} more` : '';
  return `${failures.length} of ${total} log lines were rejected (the others are stored): ${shown.join('; ')}${more}`;
}

/**
 * POST /loki/api/v1/push (DECISIONS §21): Loki's push API, so a Loki client's URL is
 * `{base_url}/loki/api/v1/push` (or its host setting `{base_url}/loki`). In its own scope: the
 * raw body reader (gzip, the 10 MB limit after decompression) and plain-text errors apply here only.
 */
export async function registerLokiPushRoute(v1: Api, inserter: Inserter): Promise<void> {
  await v1.register(async (scope: Api) => {
    rawBodyScope(scope, '*', plainTextError);
    scope.post(
      '/loki/api/v1/push',
      {
        config: { scope: 'logs:write', idempotency: 'body' },
        schema: {
          operationId: 'lokiPush',
          consumes: [protobufType, jsonType],
          tags: ['shippers'],
          summary: "Loki push API: protobuf + snappy or JSON (gzip accepted); what Promtail, Alloy, Vector's loki sink, pino-loki and winston-loki send",
          description:
            'Each line becomes an event of the dataset named by the stream label `dataset`, else `service_name`, else `job`, else `loki`; ' +
            'the other labels and structured metadata go to `payload.labels`; a line that is a JSON object is mapped as native ingest maps an ' +
            'NDJSON line (ts, severity, event, actor, source, message, event_id and their aliases to the event, the rest to the payload), ' +
            'with the entry timestamp and a `level` label where the line has none; any other line is the message. Answers 204 once the ' +
            'lines are durable; lines that break a limit or a field rule are refused alone ' +
            '(400 naming them, the others stored). Authorization: Bearer, or Basic with the token as the password. Errors are plain text. ' +
            'Limits: 10 MB body after decompression, 10,000 lines. See docs/shippers.md.',
          unvalidated: {
            body: {
              content: {
                [protobufType]: { schema: Type.String({ format: 'binary', description: 'a snappy block holding a logproto.PushRequest' }) },
                [jsonType]: {
                  schema: Type.Object({
                    streams: Type.Array(
                      Type.Object({
                        stream: Type.Record(Type.String(), Type.String()),
                        values: Type.Array(Type.Array(Type.Unknown(), { minItems: 2, maxItems: 3, description: '[nanoseconds as a string, line, structured metadata?]' })),
                      }),
                    ),
                  }),
                },
              },
            },
            headers: Type.Object({ 'Content-Encoding': contentEncodingHeader }),
          },
          response: { 204: Type.Unknown({ description: 'stored; no body' }) },
        },
      },
      async (request, reply) => {
        const by = insertRequest(request);
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const items = toShippedEvents(decode(request, body));
        const result = await inserter.insertItems(by, items);
        if (result.failures.length) throw badRequest(describe(result.failures, items.length));
        // An empty string rather than nothing: Idempotency-Key remembers an answer it has the bytes of.
        return reply.code(204).send('');
      },
    );
  });
}
