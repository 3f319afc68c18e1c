import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../../../http/types.js';
import { AppError } from '../../../errors/app-error.js';
import { datasetNamePattern } from '../../../events/dataset-service.js';
import { contentEncodingHeader, decodeWith, mediaType, rawBodyScope, type ErrorEnvelope } from '../../core/wire-body.js';
import { BadData, TooManyRecords, TooManyValues } from '../any-value.js';
import { decodeJson, decodeProtobuf, type DecodedLogs } from '../decode.js';
import { datasetHeader, exportLogs, type ExportResult } from '../export-logs.js';
import { encodeProtobufResponse, encodeStatus } from '../proto.js';
import { insertRequest, type Inserter } from '../../core/insert.js';

const protobufType = 'application/x-protobuf';
const jsonType = 'application/json';

/** The request's encoding by its Content-Type essence; only the two parsers below let a request through. */
const isProtobuf = (request: FastifyRequest) => mediaType(request) === protobufType;

// Documentation of OTLP/JSON (the handler reads the body itself, both encodings).
const AnyValue = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'OTLP AnyValue: one of stringValue, boolValue, intValue (int64 as string or number), doubleValue, arrayValue {values}, kvlistValue {values}, bytesValue (base64)',
  },
);
const KeyValues = Type.Array(Type.Object({ key: Type.String(), value: AnyValue }));
const Int64 = Type.Union([Type.String({ pattern: '^[0-9]+$' }), Type.Integer({ minimum: 0 })], { description: 'nanoseconds since the epoch' });
const ExportLogsServiceRequest = Type.Object(
  {
    resourceLogs: Type.Optional(
      Type.Array(
        Type.Object({
          resource: Type.Optional(Type.Object({ attributes: Type.Optional(KeyValues) })),
          scopeLogs: Type.Optional(
            Type.Array(
              Type.Object({
                scope: Type.Optional(Type.Object({ name: Type.Optional(Type.String()), version: Type.Optional(Type.String()) })),
                logRecords: Type.Optional(
                  Type.Array(
                    Type.Object({
                      timeUnixNano: Type.Optional(Int64),
                      observedTimeUnixNano: Type.Optional(Int64),
                      severityNumber: Type.Optional(Type.Integer({ minimum: 0, maximum: 24 })),
                      severityText: Type.Optional(Type.String()),
                      body: Type.Optional(AnyValue),
                      attributes: Type.Optional(KeyValues),
                      flags: Type.Optional(Type.Integer({ minimum: 0 })),
                      traceId: Type.Optional(Type.String({ pattern: '^([0-9a-fA-F]{32})?$', description: 'hex' })),
                      spanId: Type.Optional(Type.String({ pattern: '^([0-9a-fA-F]{16})?$', description: 'hex' })),
                      eventName: Type.Optional(Type.String()),
                    }),
                  ),
                ),
              }),
            ),
          ),
        }),
      ),
    ),
  },
  { description: 'OTLP/JSON ExportLogsServiceRequest (lowerCamelCase field names; unknown fields are ignored)' },
);
const ExportLogsServiceResponse = Type.Object(
  {
    partialSuccess: Type.Optional(
      Type.Object({
        rejectedLogRecords: Type.String({ pattern: '^[0-9]+$', description: 'int64, as a decimal string (proto3 JSON)' }),
        errorMessage: Type.String(),
      }),
    ),
  },
  { description: 'OTLP/JSON ExportLogsServiceResponse; partialSuccess is present only when records were rejected' },
);
const Binary = (description: string) => Type.String({ format: 'binary', description });

/**
 * For a protobuf request the error envelope the error handler wrote (DECISIONS §5) becomes the
 * google.rpc.Status OTLP/HTTP prescribes, same HTTP status and headers (Retry-After…), with the
 * service's error code, request id and extra fields in an ErrorInfo detail.
 */
function protobufError(error: ErrorEnvelope, request: FastifyRequest, reply: FastifyReply): Buffer | undefined {
  if (!isProtobuf(request)) return undefined;
  const { code, message, ...extra } = error;
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(extra)) metadata[key] = typeof value === 'string' ? value : JSON.stringify(value);
  reply.type(protobufType);
  return encodeStatus(reply.statusCode, { code: String(code), message: String(message), metadata });
}

/** Decodes by Content-Type, in our error vocabulary: bad data 400, over a count 413. */
function decode(request: FastifyRequest, body: Buffer): DecodedLogs {
  return decodeWith(() => (isProtobuf(request) ? decodeProtobuf(body) : decodeJson(body)), { bad: [BadData], over: [TooManyValues, TooManyRecords] });
}

function answer(request: FastifyRequest, reply: FastifyReply, result: ExportResult) {
  const partial = result.rejected ? { rejected: result.rejected, errorMessage: result.errorMessage } : undefined;
  if (isProtobuf(request)) return reply.type(protobufType).send(encodeProtobufResponse(partial));
  return reply
    .type(jsonType)
    .send(partial ? { partialSuccess: { rejectedLogRecords: String(partial.rejected), errorMessage: partial.errorMessage } } : {});
}

/**
 * POST /otlp/v1/logs (DECISIONS §15): OTLP/HTTP logs, so `OTEL_EXPORTER_OTLP_ENDPOINT={base_url}/otlp`
 * works as it is. In its own scope: the two body parsers (native ingest's reader: gzip, the 10 MB
 * limit after decompression) and the protobuf error bodies apply to this route only.
 */
export async function registerOtlpLogsRoute(v1: Api, inserter: Inserter): Promise<void> {
  await v1.register(async (scope: Api) => {
    rawBodyScope(scope, [protobufType, jsonType], protobufError);
    scope.post(
      '/otlp/v1/logs',
      {
        config: { scope: 'logs:write', idempotency: 'body' },
        schema: {
          operationId: 'exportOtlpLogs',
          consumes: [protobufType, jsonType],
          tags: ['otlp'],
          summary: 'OTLP/HTTP logs export (protobuf or JSON, gzip accepted): point OTEL_EXPORTER_OTLP_ENDPOINT at {base_url}/otlp',
          description:
            'Takes an OTLP `ExportLogsServiceRequest` and answers its `ExportLogsServiceResponse` in the same encoding, once the ' +
            'stored records are durable. Each resource\'s records go to the dataset named by `X-Ops-Dataset`, else by the resource ' +
            'attribute `service.name`, else `otel` (created with its first stored record, as by native ingest). A record that breaks a limit ' +
            '(256 KB, payload depth and keys) or has an unknown severity is rejected alone and counted in `partialSuccess`. ' +
            'Limits: 10 MB body after decompression, 10,000 log records. Errors: JSON requests get the usual error body; ' +
            'protobuf requests get a `google.rpc.Status` with the same HTTP status (429 and 503 carry `Retry-After`). See docs/otlp.md.',
          unvalidated: {
            body: {
              content: {
                [protobufType]: { schema: Binary('ExportLogsServiceRequest, binary protobuf') },
                [jsonType]: { schema: ExportLogsServiceRequest },
              },
            },
            headers: Type.Object({
              'Content-Encoding': contentEncodingHeader,
              'X-Ops-Dataset': Type.Optional(Type.String({ pattern: datasetNamePattern, description: 'the dataset of every record of the request' })),
            }),
          },
          response: {
            200: {
              description: 'ExportLogsServiceResponse, in the encoding of the request',
              content: {
                [jsonType]: { schema: ExportLogsServiceResponse },
                [protobufType]: { schema: Binary('ExportLogsServiceResponse, binary protobuf') },
              },
            },
          },
        },
      },
      async (request, reply) => {
        const by = insertRequest(request);
        const header = datasetHeader(request.headers['x-ops-dataset']);
        // No Content-Type and no body: no parser ran.
        if (!Buffer.isBuffer(request.body)) throw new AppError('unsupported_type', `send the request as ${protobufType} or ${jsonType}`);
        const decoded = decode(request, request.body);
        const result = await exportLogs(inserter, by, decoded, header);
        return answer(request, reply, result);
      },
    );
  });
}
