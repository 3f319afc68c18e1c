import protobuf from 'protobufjs';
// protobufjs static code generated from the official OTLP .proto files (opentelemetry-proto),
// as published in @opentelemetry/otlp-transformer up to 0.214.0 (docs/dependencies.md says why).
import generatedRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import { BadData, otlpLimits, tooManyRecords, TooManyRecords, TooManyValues } from './any-value.js';
import { ingestLimits } from '../core/limits.js';

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

/**
 * The messages of an ExportLogsServiceRequest by the field numbers that hold sub-messages
 * (opentelemetry-proto's logs.proto, common.proto and resource.proto, as the generated decoders
 * read them: proto.test.ts holds this table to them). Every other field is skipped by wire type.
 */
type MessageKind = 'request' | 'resourceLogs' | 'resource' | 'scopeLogs' | 'scope' | 'logRecord' | 'keyValue' | 'anyValue' | 'arrayValue' | 'keyValueList' | 'entityRef';
export const otlpMessageFields: Record<MessageKind, Record<number, MessageKind>> = {
  request: { 1: 'resourceLogs' },
  resourceLogs: { 1: 'resource', 2: 'scopeLogs' },
  resource: { 1: 'keyValue', 3: 'entityRef' },
  scopeLogs: { 1: 'scope', 2: 'logRecord' },
  scope: { 3: 'keyValue' },
  logRecord: { 5: 'anyValue', 6: 'keyValue' },
  keyValue: { 2: 'anyValue' },
  anyValue: { 5: 'arrayValue', 6: 'keyValueList' },
  arrayValue: { 1: 'anyValue' },
  keyValueList: { 1: 'keyValue' },
  entityRef: {},
};

class NestedTooDeep extends Error {}

/**
 * Walks the body's wire format before it is decoded, so the decode is bounded: at most
 * `otlpLimits.values` messages (a 10 MB body of empty messages would otherwise become ~40× its
 * size in objects), nesting at most `otlpLimits.messageDepth` (protobufjs would recurse until the
 * stack overflows) and at most native ingest's 10,000 log records, refused at the 10,001st. The
 * walk reads tags and lengths with protobufjs's own Reader and skips every field it does not
 * descend into; it holds no state outside the call (the generated decoders are left untouched).
 */
function checkBounds(body: Uint8Array): void {
  walkOtlpRequest(body, { messages: otlpLimits.values, records: ingestLimits.events, depth: otlpLimits.messageDepth });
}

/** The walk of checkBounds with any limits; returns what it counted (proto.test.ts compares it with the decoders). */
export function walkOtlpRequest(body: Uint8Array, limits: { messages: number; records: number; depth: number }): { messages: number; records: number; depth: number } {
  const reader = protobuf.Reader.create(body);
  const count = { messages: 0, records: 0, depth: 0 };
  const walk = (kind: MessageKind, end: number, depth: number): void => {
    if (++count.messages > limits.messages) throw new TooManyValues(`the request holds more than ${limits.messages} protobuf messages; send smaller batches`);
    if (kind === 'logRecord' && ++count.records > limits.records) throw tooManyRecords();
    if (depth > limits.depth) throw new NestedTooDeep();
    count.depth = Math.max(count.depth, depth);
    const fields = otlpMessageFields[kind];
    while (reader.pos < end) {
      const tag = reader.uint32();
      const child = fields[tag >>> 3];
      if (child !== undefined && (tag & 7) === 2) {
        const length = reader.uint32();
        const childEnd = reader.pos + length;
        if (childEnd > end) throw new RangeError(`a message of ${length} bytes runs past its parent's end`);
        walk(child, childEnd, depth + 1);
      } else {
        reader.skipType(tag & 7);
      }
    }
    if (reader.pos !== end) throw new RangeError("a field runs past its message's end");
  };
  walk('request', body.length, 1);
  return count;
}

/** Binary protobuf → the generated ExportLogsServiceRequest message (read by decode.ts). */
export function decodeProtobufRequest(body: Uint8Array): unknown {
  try {
    checkBounds(body);
    return ExportLogsServiceRequest.decode(body);
  } catch (error) {
    if (error instanceof TooManyValues || error instanceof TooManyRecords) throw error;
    if (error instanceof NestedTooDeep) throw new BadData(`the protobuf body nests messages more than ${otlpLimits.messageDepth} deep`);
    // protobufjs's own, or the walk's: a truncated message, an invalid wire type…
    throw new BadData(`the request body is not a protobuf ExportLogsServiceRequest (${error instanceof Error ? error.message : String(error)})`);
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
