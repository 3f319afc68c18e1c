import snappy from 'snappy';
import { ingestLimits } from '../core/limits.js';
import { LabelSyntaxError, parseLabels } from './labels.js';
import { decodePushRequest, TooManyEntries, type DecodedEntry } from './push-proto.js';
import { readPushRequest, type RawStream } from './push-wire.js';
import { noMetadata, type LokiEntry } from './entry.js';

/** A push request read into what the mapping needs, from either encoding. */
export interface LokiStream {
  labels: Record<string, string>;
  entries: LokiEntry[];
}

/** The request cannot be read: 400. */
export class BadPush extends Error {}
/** The request holds more than native ingest's 10,000 events, or inflates past 10 MB: 413. */
export class PushTooLarge extends Error {}

const tooManyEntries = () => new PushTooLarge(`a push may carry at most ${ingestLimits.events} log lines; send smaller batches`);

/** Nanoseconds since the epoch, as a decimal string of 1 to 19 digits (or a number) → ms; NaN when it is not that. */
export function nanosToMs(value: unknown): number {
  const text = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : value;
  if (typeof text !== 'string' || text.length < 1 || text.length > 19) return NaN;
  // Digits only, the milliseconds summed on the way (at most 13 digits: exact in a double), in
  // one loop: a regular expression, or Number() of a slice, per line cost more than the rest.
  const msDigits = text.length - 6;
  let ms = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return NaN;
    if (i < msDigits) ms = ms * 10 + c;
  }
  return ms;
}


function stringMap(value: unknown, what: string): Record<string, string> {
  if (value === undefined || value === null) return noMetadata;
  if (typeof value !== 'object' || Array.isArray(value)) throw new BadPush(`${what} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new BadPush(`${what}.${key} must be a string`);
    out[key] = v;
  }
  return out;
}

/**
 * application/json: `{"streams": [{"stream": {label: value}, "values": [[ns, line, metadata?], …]}]}`
 * (the form Loki documents, and what pino-loki, winston-loki and Vector send).
 */
export function decodeJsonPush(body: Buffer): LokiStream[] {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadPush('the request body is not valid JSON');
  }
  const streams = (value as { streams?: unknown } | null)?.streams;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray(streams)) {
    throw new BadPush('the request body must be a JSON object {"streams": [{"stream": {…}, "values": [[ts, line], …]}]}');
  }
  let count = 0;
  const out: LokiStream[] = [];
  for (let i = 0; i < streams.length; i++) {
    const s = streams[i] as { stream?: unknown; values?: unknown } | null;
    if (typeof s !== 'object' || s === null || !Array.isArray(s.values)) throw new BadPush(`streams[${i}] must be an object with "stream" and "values"`);
    const labels = stringMap(s.stream, `streams[${i}].stream`);
    const values = s.values as unknown[];
    count += values.length;
    if (count > ingestLimits.events) throw tooManyEntries();
    const entries: LokiEntry[] = new Array<LokiEntry>(values.length);
    for (let j = 0; j < values.length; j++) {
      const v = values[j];
      if (!Array.isArray(v) || v.length < 2 || v.length > 3) throw new BadPush(`streams[${i}].values[${j}] must be [timestamp, line] or [timestamp, line, structured metadata]`);
      const ts = nanosToMs(v[0]);
      if (Number.isNaN(ts)) throw new BadPush(`streams[${i}].values[${j}][0] must be the time in nanoseconds since the epoch, as a string of digits`);
      if (typeof v[1] !== 'string') throw new BadPush(`streams[${i}].values[${j}][1] must be the log line, a string`);
      entries[j] = { ts: ts > 0 ? ts : undefined, line: v[1], metadata: stringMap(v[2], `streams[${i}].values[${j}][2]`) };
    }
    out.push({ labels: labels === noMetadata ? {} : labels, entries });
  }
  return out;
}

/** The length a snappy block says it inflates to (its varint preamble); -1 when it has none. */
export function snappyLength(body: Buffer): number {
  let length = 0;
  for (let i = 0, shift = 1; i < 5 && i < body.length; i++, shift *= 128) {
    const byte = body[i]!;
    length += (byte & 0x7f) * shift;
    if (byte < 0x80) return length;
  }
  return -1;
}

function entryTs(entry: DecodedEntry): number | undefined {
  const t = entry.timestamp;
  if (!t) return undefined;
  // protobufjs's int64 is a Long: its toNumber() is the value rounded once, as Number(String(long)) is, without the decimal string.
  const s = t.seconds ?? 0;
  const seconds = typeof s === 'number' ? s : s.toNumber();
  const ms = seconds * 1000 + Math.floor((t.nanos ?? 0) / 1_000_000);
  return ms > 0 ? ms : undefined;
}

function streamLabels(text: string): Record<string, string> {
  try {
    return parseLabels(text);
  } catch (error) {
    if (error instanceof LabelSyntaxError) throw new BadPush(error.message);
    throw error;
  }
}

/** application/x-protobuf: a snappy block (Loki's framing-less "block" format) holding a logproto.PushRequest. */
export function decodeProtobufPush(body: Buffer): LokiStream[] {
  if (body.length === 0) return [];
  const length = snappyLength(body);
  if (length < 0) throw new BadPush('the request body is not snappy-compressed protobuf (a snappy block starts with its length)');
  if (length > ingestLimits.bodyBytes) throw new PushTooLarge(`the request body may be at most ${ingestLimits.bodyBytes} bytes after decompression`);
  let raw: Buffer;
  try {
    raw = snappy.uncompressSync(body, { asBuffer: true }) as Buffer;
  } catch {
    throw new BadPush('the request body is not a valid snappy block');
  }
  // The reader written for the message; protobufjs for what it does not take (errors, odd encodings).
  const read = readPushRequest(raw, ingestLimits.events);
  return read ? withLabels(read) : decodeWithProtobufjs(raw);
}

/** The streams push-wire.ts read, their labels parsed (as decodeWithProtobufjs parses them). */
export function withLabels(streams: readonly RawStream[]): LokiStream[] {
  return streams.map((stream) => ({ labels: streamLabels(stream.labels), entries: stream.entries }));
}

/** An inflated PushRequest read by protobufjs (what decodeProtobufPush did before push-wire.ts; exported for its test). */
export function decodeWithProtobufjs(raw: Buffer): LokiStream[] {
  let streams;
  try {
    streams = decodePushRequest(raw, ingestLimits.events);
  } catch (error) {
    if (error instanceof TooManyEntries) throw tooManyEntries();
    throw new BadPush(`the request body is not a protobuf logproto.PushRequest (${error instanceof Error ? error.message : String(error)})`);
  }
  return streams.map((stream): LokiStream => {
    const labels = streamLabels(stream.labels ?? '{}');
    const entries = (stream.entries ?? []).map((entry): LokiEntry => {
      const pairs = entry.structuredMetadata;
      let metadata = noMetadata;
      if (pairs && pairs.length) {
        metadata = {};
        for (const pair of pairs) metadata[pair.name ?? ''] = pair.value ?? '';
      }
      return { ts: entryTs(entry), line: entry.line ?? '', metadata };
    });
    return { labels, entries };
  });
}
