import protobuf from 'protobufjs';
// protobufjs static code generated from the official OTLP .proto files (opentelemetry-proto),
// as published in @opentelemetry/otlp-transformer up to 0.214.0 (docs/dependencies.md says why).
import generatedRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import { BadData, otlpLimits, tooManyRecords, TooManyRecords, TooManyValues } from './any-value.js';
import { ingestLimits } from '../events/ingest-parse.js';

interface Decoder {
  decode(reader: Uint8Array, length?: number): unknown;
}
interface Encoder {
  encode(message: object): { finish(): Uint8Array };
}
type Namespace = Record<string, Partial<Decoder> | undefined>;

/** The parts of the generated module used here (its own typings declare only `$protobuf.Root`). */
interface Generated {
  opentelemetry: {
    proto: {
      common: { v1: Namespace };
      resource: { v1: Namespace };
      logs: { v1: Namespace };
      collector: { logs: { v1: Namespace & { ExportLogsServiceRequest: Decoder; ExportLogsServiceResponse: Encoder } } };
    };
  };
}

const otel = (generatedRoot as unknown as Generated).opentelemetry.proto;
const { ExportLogsServiceRequest, ExportLogsServiceResponse } = otel.collector.logs.v1;

/** The decode in progress (decoding is synchronous, so one at a time per process). */
let decoding: { messages: number; depth: number; records: number } | undefined;

class NestedTooDeep extends Error {}

/**
 * The generated decoders call each other through the module's namespace (`$root…AnyValue.decode`),
 * so wrapping each one bounds every decode: at most `otlpLimits.values` messages (a 10 MB body of
 * empty messages would otherwise become ~40× its size in objects), nesting at most
 * `otlpLimits.messageDepth` (protobufjs would recurse until the stack overflows) and at most
 * native ingest's 10,000 log records, refused at the 10,001st rather than after decoding all.
 */
function guard(namespace: Namespace): void {
  for (const [name, type] of Object.entries(namespace)) {
    const decode = type?.decode;
    if (!type || typeof decode !== 'function') continue;
    const isRecord = name === 'LogRecord';
    type.decode = function guardedDecode(this: unknown, ...args: [Uint8Array, number?]) {
      const d = decoding;
      if (!d) return decode.apply(this, args);
      if (++d.messages > otlpLimits.values) throw new TooManyValues(`the request holds more than ${otlpLimits.values} protobuf messages; send smaller batches`);
      if (isRecord && ++d.records > ingestLimits.events) throw tooManyRecords();
      if (++d.depth > otlpLimits.messageDepth) throw new NestedTooDeep();
      try {
        return decode.apply(this, args);
      } finally {
        d.depth--;
      }
    };
  }
}
for (const namespace of [otel.common.v1, otel.resource.v1, otel.logs.v1, otel.collector.logs.v1]) guard(namespace);

/** Binary protobuf → the generated ExportLogsServiceRequest message (read by decode.ts). */
export function decodeProtobufRequest(body: Uint8Array): unknown {
  decoding = { messages: 0, depth: 0, records: 0 };
  try {
    return ExportLogsServiceRequest.decode(body);
  } catch (error) {
    if (error instanceof TooManyValues || error instanceof TooManyRecords) throw error;
    if (error instanceof NestedTooDeep) throw new BadData(`the protobuf body nests messages more than ${otlpLimits.messageDepth} deep`);
    // protobufjs's own: a truncated message, an invalid wire type…
    throw new BadData(`the request body is not a protobuf ExportLogsServiceRequest (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    decoding = undefined;
  }
}

/** ExportLogsServiceResponse, binary. Full success leaves partial_success unset (an empty message). */
export function encodeProtobufResponse(partial: { rejected: number; errorMessage: string } | undefined): Buffer {
  const message = partial ? { partialSuccess: { rejectedLogRecords: partial.rejected, errorMessage: partial.errorMessage } } : {};
  return Buffer.from(ExportLogsServiceResponse.encode(message).finish());
}

/**
 * google.rpc.Status, the body OTLP/HTTP gives every 4xx and 5xx answer to a protobuf request,
 * with a google.rpc.ErrorInfo detail carrying the service's error code (field numbers as in
 * googleapis' google/rpc/status.proto and error_details.proto; Any is protobufjs's own copy).
 */
const rpc = protobuf.Root.fromJSON(protobuf.common.get('google/protobuf/any.proto')!);
protobuf.parse(
  `syntax = "proto3";
  package google.rpc;
  message Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; }
  message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }`,
  rpc,
  { keepCase: true },
);
rpc.resolveAll();
const Status = rpc.lookupType('google.rpc.Status');
const ErrorInfo = rpc.lookupType('google.rpc.ErrorInfo');
export { Status as StatusType, ErrorInfo as ErrorInfoType };

/** gRPC status codes by HTTP status (google.rpc.Code); OTLP clients go by the HTTP status. */
const grpcCodes: Record<number, number> = { 400: 3, 401: 16, 402: 8, 403: 7, 404: 5, 409: 9, 413: 8, 415: 3, 429: 8, 500: 13, 501: 12, 503: 14 };

export function encodeStatus(httpStatus: number, error: { code: string; message: string; metadata: Record<string, string> }): Buffer {
  const info = ErrorInfo.encode(ErrorInfo.create({ reason: error.code, domain: 'opsplatform', metadata: error.metadata })).finish();
  const status = Status.create({
    code: grpcCodes[httpStatus] ?? (httpStatus >= 500 ? 13 : 3),
    message: error.message,
    details: [{ type_url: 'type.googleapis.com/google.rpc.ErrorInfo', value: info }],
  });
  return Buffer.from(Status.encode(status).finish());
}
