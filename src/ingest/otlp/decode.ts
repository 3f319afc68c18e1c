import { ingestLimits } from '../core/limits.js';
import { anyValue, BadData, hexId, int32, int64, keyValues, list, message, text, tooManyRecords, type Json, type Reading, type WireFormat } from './any-value.js';
import { decodeProtobufRequest } from './proto.js';

/** An ExportLogsServiceRequest read into what the mapping needs (docs/otlp.md), either encoding. */
export interface DecodedLogs {
  resources: DecodedResource[];
  /** Log records in the request. */
  records: number;
}

export interface DecodedResource {
  attributes: Record<string, Json>;
  scopes: DecodedScope[];
}

export interface DecodedScope {
  name: string;
  version: string;
  records: DecodedRecord[];
}

export interface DecodedRecord {
  /** Where it is in the request (`resourceLogs[0].scopeLogs[0].logRecords[3]`), for partial_success. */
  path: string;
  /** 0 = unset */
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  /** 0 = unspecified */
  severityNumber: number;
  severityText: string;
  /** undefined = no body */
  body: Json | undefined;
  attributes: Record<string, Json>;
  /** Lower-case hex; '' when absent. */
  traceId: string;
  spanId: string;
  flags: number;
  eventName: string;
}

/** Levels in the event payload (the payload object is 1): a record's attribute values and body sit at 2, the resource's at 3. */
const recordLevel = 2;
const resourceLevel = 3;

function readRecord(value: unknown, reading: Reading, path: string): DecodedRecord {
  const r = message(value, path) ?? {};
  const hasBody = r.body !== null && r.body !== undefined;
  return {
    path,
    timeUnixNano: int64(r.timeUnixNano, `${path}.timeUnixNano`, true),
    observedTimeUnixNano: int64(r.observedTimeUnixNano, `${path}.observedTimeUnixNano`, true),
    severityNumber: int32(r.severityNumber, `${path}.severityNumber`),
    severityText: text(r.severityText, `${path}.severityText`),
    body: hasBody ? anyValue(r.body, recordLevel, reading, `${path}.body`) : undefined,
    attributes: keyValues(list(r.attributes, `${path}.attributes`), recordLevel, reading, `${path}.attributes`),
    traceId: hexId(r.traceId, 16, reading.format, `${path}.traceId`),
    spanId: hexId(r.spanId, 8, reading.format, `${path}.spanId`),
    flags: int32(r.flags, `${path}.flags`, true),
    eventName: text(r.eventName, `${path}.eventName`),
  };
}

/**
 * Walks a decoded ExportLogsServiceRequest: protobufjs's message objects or OTLP/JSON's parsed
 * value. Unknown fields are ignored (as OTLP requires of both encodings); a field of the wrong
 * type is bad data, named by its path.
 */
export function readLogsRequest(root: unknown, format: WireFormat): DecodedLogs {
  const reading: Reading = { format, values: 0 };
  const request = message(root, 'the request body') ?? {};
  let records = 0;
  const resources = list(request.resourceLogs, 'resourceLogs').map((item, i): DecodedResource => {
    const path = `resourceLogs[${i}]`;
    const rl = message(item, path) ?? {};
    const resource = message(rl.resource, `${path}.resource`) ?? {};
    const attributes = keyValues(list(resource.attributes, `${path}.resource.attributes`), resourceLevel, reading, `${path}.resource.attributes`);
    const scopes = list(rl.scopeLogs, `${path}.scopeLogs`).map((scopeItem, j): DecodedScope => {
      const scopePath = `${path}.scopeLogs[${j}]`;
      const sl = message(scopeItem, scopePath) ?? {};
      const scope = message(sl.scope, `${scopePath}.scope`) ?? {};
      const logRecords = list(sl.logRecords, `${scopePath}.logRecords`);
      records += logRecords.length;
      if (records > ingestLimits.events) throw tooManyRecords();
      return {
        name: text(scope.name, `${scopePath}.scope.name`),
        version: text(scope.version, `${scopePath}.scope.version`),
        records: logRecords.map((record, k) => readRecord(record, reading, `${scopePath}.logRecords[${k}]`)),
      };
    });
    return { attributes, scopes };
  });
  return { resources, records };
}

/** application/json: OTLP/JSON (proto3 JSON mapping with OTLP's deviations: hex ids, enums as numbers). */
export function decodeJson(body: Buffer): DecodedLogs {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadData('the request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadData('the request body must be a JSON object (an OTLP/JSON ExportLogsServiceRequest)');
  }
  return readLogsRequest(value, 'json');
}

/** application/x-protobuf: decoded by the generated code of the OTLP .proto files (proto.ts). */
export function decodeProtobuf(body: Buffer): DecodedLogs {
  return readLogsRequest(decodeProtobufRequest(body), 'protobuf');
}
