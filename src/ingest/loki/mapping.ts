import { ingestLimits } from '../core/limits.js';
import { levelSeverity } from '../core/severity.js';
import { plainPayload, type PlainPayload } from '../core/normalise.js';
import { ingestItem, type IngestItem } from '../core/insert.js';
import type { LokiStream } from './decode.js';
import { noMetadata, type LokiEntry } from './entry.js';

/** The stream labels that name the dataset, first found wins (DECISIONS §21); else `loki`. */
const datasetLabels = ['dataset', 'service_name', 'job'] as const;
/** Labels that carry a level when the line does not (pino-loki's and winston-loki's `level`, Alloy's `detected_level`). */
const levelLabels = ['level', 'severity', 'detected_level'] as const;

export function streamDataset(labels: Record<string, string>): { dataset: string; label: string | undefined } {
  for (const label of datasetLabels) {
    const value = labels[label];
    if (value !== undefined && value !== '') return { dataset: value, label };
  }
  return { dataset: 'loki', label: undefined };
}

/**
 * A line that is a JSON object → that object; anything else → undefined (the line is plain
 * text). JSON.parse is tried only on a line whose first character after white space is `{`: a
 * plain-text line is refused without the cost of a thrown SyntaxError.
 */
function jsonObject(line: string): Record<string, unknown> | undefined {
  let i = 0;
  let c = line.charCodeAt(0);
  while (c === 32 || c === 9 || c === 10 || c === 13) c = line.charCodeAt(++i);
  if (c !== 123 /* { */) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The severity index the labels give a line without a level of its own: the first of levelLabels whose value we know. */
function labelSeverity(labels: Record<string, string>): number | undefined {
  for (const label of levelLabels) {
    const value = labels[label];
    if (value === undefined) continue;
    const severity = levelSeverity(value);
    if (severity !== undefined) return severity;
  }
  return undefined;
}

/**
 * What every entry of a stream shares, worked out once per stream (labels are per stream): the
 * dataset, `payload.labels` (the stream's labels but the one naming the dataset; undefined
 * without any), the severity they give, and the payload of a line that is not JSON.
 */
export interface StreamMapping {
  dataset: string;
  labels: Record<string, string> | undefined;
  severity: number | undefined;
  /** `{labels}` and its JSON, written once per stream: the payload of each of its plain-text lines. */
  plain: PlainPayload;
}

export function streamMapping(streamLabels: Record<string, string>): StreamMapping {
  const { dataset, label } = streamDataset(streamLabels);
  const labels: Record<string, string> = {};
  for (const name in streamLabels) if (name !== label) labels[name] = streamLabels[name]!;
  const payloadLabels = anyKey(labels) ? labels : undefined;
  return { dataset, labels: payloadLabels, severity: labelSeverity(labels), plain: plainPayload(payloadLabels) };
}

/** Whether the object has a key to write (a label named `__proto__` is not set by an assignment, so not one). */
function anyKey(labels: Record<string, string>): boolean {
  for (const _ in labels) return true;
  return false;
}

/**
 * One entry of a stream → an item for native ingest's mapping (docs/shippers.md): a line that is
 * a JSON object is mapped as native ingest maps an NDJSON line (normaliseMapped), with the
 * entry's timestamp as its ts and the stream's level label as its severity where the line has
 * none, and `payload.labels` the stream's labels but the one naming the dataset, with the entry's
 * structured metadata; any other line is the message as it is. A line past the 256 KB bound is
 * not parsed (normaliseMapped refuses it by its size).
 */
export function toShippedEvent(stream: StreamMapping, entry: LokiEntry): IngestItem {
  let labels = stream.labels;
  let severity = stream.severity;
  let plain: PlainPayload | undefined = stream.plain;
  if (entry.metadata !== noMetadata) {
    let merged: Record<string, string> | undefined;
    for (const name in entry.metadata) (merged ??= { ...stream.labels })[name] = entry.metadata[name]!;
    if (merged !== undefined) {
      labels = anyKey(merged) ? merged : stream.labels;
      severity = labelSeverity(merged);
      plain = undefined;
    }
  }
  const bytes = Buffer.byteLength(entry.line);
  const parsed = bytes > ingestLimits.eventBytes ? undefined : jsonObject(entry.line);
  if (parsed) return ingestItem(stream.dataset, parsed, undefined, entry.ts, severity, undefined, labels, bytes, undefined);
  return ingestItem(stream.dataset, undefined, entry.line, entry.ts, severity, undefined, labels, bytes, plain);
}

/** Every entry of the request, in body order (so Idempotency-Key's derived ids repeat on a retry). */
export function toShippedEvents(streams: readonly LokiStream[]): IngestItem[] {
  const out: IngestItem[] = [];
  for (const stream of streams) {
    const mapping = streamMapping(stream.labels);
    for (const entry of stream.entries) out.push(toShippedEvent(mapping, entry));
  }
  return out;
}
