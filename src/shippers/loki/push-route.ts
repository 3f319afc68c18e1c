import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { AppError, badRequest, tooLarge } from '../../errors/app-error.js';
import { readBody } from '../../events/ingest-route.js';
import { ingestLimits } from '../../events/ingest-parse.js';
import type { EventsRuntime } from '../../events/runtime.js';
import { idempotencyOf } from '../../idempotency/index.js';
import { storeShipped, type ItemFailure } from '../store-shipped.js';
import { BadPush, decodeJsonPush, decodeProtobufPush, PushTooLarge, type LokiStream } from './decode.js';
import { toShippedEvents } from './mapping.js';

const protobufType = 'application/x-protobuf';
const jsonType = 'application/json';
const shownFailures = 5;

const essence = (request: FastifyRequest) => String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * Loki answers its errors as plain text (`http.Error`), and its clients print that text: the
 * error envelope the error handler wrote (DECISIONS §5) becomes one line, same status and
 * headers, still naming our code and the request id.
 */
function plainTextErrors(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload?: unknown) => void): void {
  if (reply.statusCode < 400 || typeof payload !== 'string') return done(null, payload);
  let error: { code?: unknown; message?: unknown; request_id?: unknown } | undefined;
  try {
    error = (JSON.parse(payload) as { error?: typeof error }).error;
  } catch {
    return done(null, payload);
  }
  if (!error) return done(null, payload);
  reply.type('text/plain; charset=utf-8');
  done(null, `${String(error.message)} (${String(error.code)}, request id ${String(error.request_id)})\n`);
}

function decode(request: FastifyRequest, body: Buffer): LokiStream[] {
  const type = essence(request);
  try {
    if (type === jsonType) return decodeJsonPush(body);
    if (type === protobufType || type === '') return decodeProtobufPush(body);
  } catch (error) {
    if (error instanceof BadPush) throw badRequest(error.message);
    if (error instanceof PushTooLarge) throw tooLarge(ingestLimits.bodyBytes, error.message);
    throw error;
  }
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
export async function registerLokiPushRoute(v1: Api, ctx: AppContext, events: EventsRuntime): Promise<void> {
  await v1.register(async (scope: Api) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (request, payload, done) => readBody(request, payload, done as (e: Error | null, b?: Buffer) => void));
    scope.addHook('onSend', plainTextErrors);
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
            'the other labels and structured metadata go to `payload.labels`; a JSON line is parsed into the payload (its `message`/`msg` ' +
            'and `level`/`severity` into the event). Answers 204 once the lines are durable; lines that break a limit are refused alone ' +
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
            headers: Type.Object({
              'Content-Encoding': Type.Optional(Type.Union([Type.Literal('gzip'), Type.Literal('identity')], { description: 'gzip: the body is gzip-compressed (limits apply after decompression).' })),
            }),
          },
          response: { 204: Type.Unknown({ description: 'stored; no body' }) },
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const items = toShippedEvents(decode(request, body));
        const keyed = idempotencyOf(request);
        const result = await storeShipped(ctx, events, auth, items, {
          onAppendError: (error) => request.log.error({ err: error }, 'event append failed'),
          deriveEventIds: keyed ? (stored) => keyed.deriveEventIds(stored) : undefined,
        });
        if (result.failures.length) throw badRequest(describe(result.failures, items.length));
        // An empty string rather than nothing: Idempotency-Key remembers an answer it has the bytes of.
        return reply.code(204).send('');
      },
    );
  });
}
