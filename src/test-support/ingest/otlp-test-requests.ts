import zlib from 'node:zlib';
import generatedRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import { ErrorInfoType, StatusType } from '../../ingest/otlp/proto.js';

/**
 * Builders of OTLP/JSON requests for the tests, and their binary protobuf form made by the
 * generated code of the OTLP .proto files (the encoder the decoder is tested against).
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type OtlpAnyValue = Record<string, unknown>;

/** The AnyValue an SDK sends for a JavaScript value (integers as intValue, other numbers as doubleValue). */
export function anyValueOf(value: JsonValue | bigint | Uint8Array): OtlpAnyValue {
  if (value === null) return {};
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'bigint') return { intValue: value.toString() };
  if (typeof value === 'number') return Number.isSafeInteger(value) && !Object.is(value, -0) ? { intValue: String(value) } : { doubleValue: value };
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValueOf) } };
  return { kvlistValue: { values: Object.entries(value).map(([key, v]) => ({ key, value: anyValueOf(v) })) } };
}

export const attributes = (values: Record<string, JsonValue | bigint | Uint8Array>) => Object.entries(values).map(([key, value]) => ({ key, value: anyValueOf(value) }));

export interface ResourceSpec {
  resource?: Record<string, JsonValue>;
  scope?: { name?: string; version?: string };
  records: Array<Record<string, unknown>>;
}

/** An OTLP/JSON ExportLogsServiceRequest: one ResourceLogs with one ScopeLogs per spec. */
export const logsRequest = (...specs: ResourceSpec[]) => ({
  resourceLogs: specs.map((spec) => ({
    resource: { attributes: attributes(spec.resource ?? {}) },
    scopeLogs: [{ scope: spec.scope ?? {}, logRecords: spec.records }],
  })),
});

interface Codec {
  fromObject(object: unknown): object;
  encode(message: object): { finish(): Uint8Array };
  decode(bytes: Uint8Array): object;
  toObject(message: object, options?: object): Record<string, unknown>;
}
interface Generated {
  opentelemetry: {
    proto: {
      common: { v1: { AnyValue: Codec } };
      collector: { logs: { v1: { ExportLogsServiceRequest: Codec; ExportLogsServiceResponse: Codec } } };
    };
  };
}
const otel = (generatedRoot as unknown as Generated).opentelemetry.proto;
export const { AnyValue: AnyValueCodec } = otel.common.v1;
const { ExportLogsServiceRequest, ExportLogsServiceResponse } = otel.collector.logs.v1;

/** OTLP/JSON's hex trace and span ids as the bytes protobuf carries. */
function hexIdsToBytes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hexIdsToBytes);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, (key === 'traceId' || key === 'spanId') && typeof v === 'string' ? Buffer.from(v, 'hex') : hexIdsToBytes(v)]),
  );
}

/** The binary protobuf form of an OTLP/JSON request. */
export const toProtobuf = (request: object): Buffer => Buffer.from(ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(hexIdsToBytes(request))).finish());

export function decodeResponse(body: Uint8Array): { rejected: number; errorMessage: string } | undefined {
  const response = ExportLogsServiceResponse.toObject(ExportLogsServiceResponse.decode(body), { longs: Number }) as {
    partialSuccess?: { rejectedLogRecords?: number; errorMessage?: string };
  };
  const partial = response.partialSuccess;
  return partial ? { rejected: partial.rejectedLogRecords ?? 0, errorMessage: partial.errorMessage ?? '' } : undefined;
}

/** A google.rpc.Status body with its ErrorInfo detail. */
export function decodeStatus(body: Uint8Array): { code: number; message: string; reason: string; metadata: Record<string, string> } {
  const status = StatusType.toObject(StatusType.decode(body)) as { code?: number; message?: string; details?: Array<{ type_url: string; value: Uint8Array }> };
  const detail = status.details?.find((d) => d.type_url === 'type.googleapis.com/google.rpc.ErrorInfo');
  const info = detail ? (ErrorInfoType.toObject(ErrorInfoType.decode(detail.value)) as { reason?: string; metadata?: Record<string, string> }) : {};
  return { code: status.code ?? 0, message: status.message ?? '', reason: info.reason ?? '', metadata: info.metadata ?? {} };
}

export interface OtlpAnswer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The body as JSON when it is JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/**
 * POST {baseUrl}/otlp/v1/logs: an object is sent as OTLP/JSON, a Buffer as binary protobuf
 * (unless `contentType` says otherwise); `token: null` sends none.
 */
export async function postLogs(
  baseUrl: string,
  token: string | null,
  body: object | Buffer,
  options: { contentType?: string; headers?: Record<string, string>; gzip?: boolean } = {},
): Promise<OtlpAnswer> {
  const binary = Buffer.isBuffer(body);
  const headers: Record<string, string> = {
    'content-type': options.contentType ?? (binary ? 'application/x-protobuf' : 'application/json'),
    ...options.headers,
  };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let payload: Buffer = binary ? body : Buffer.from(JSON.stringify(body));
  if (options.gzip) {
    payload = zlib.gzipSync(payload);
    headers['content-encoding'] = 'gzip';
  }
  const response = await fetch(`${baseUrl}/otlp/v1/logs`, { method: 'POST', headers, body: payload as unknown as BodyInit });
  const bytes = Buffer.from(await response.arrayBuffer());
  let json: unknown;
  if (response.headers.get('content-type')?.startsWith('application/json')) json = JSON.parse(bytes.toString('utf8'));
  return { status: response.status, headers: response.headers, bytes, json };
}
