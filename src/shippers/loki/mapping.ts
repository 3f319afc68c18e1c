import type { ShippedEvent } from '../store-shipped.js';
import { shipperSeverity } from '../severity.js';
import type { LokiEntry, LokiStream } from './decode.js';

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

/** A line that is a JSON object → that object; anything else → undefined (the line is plain text). */
function jsonObject(line: string): Record<string, unknown> | undefined {
  if (line.charCodeAt(0) !== 123 /* { */) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One entry of a stream → an event object for native ingest (docs/shippers.md): `ts` the entry's
 * timestamp; `payload.labels` the stream's labels but the one naming the dataset, with the entry's
 * structured metadata; a JSON-object line is also parsed into the payload: its string `message`
 * (else `msg`, pino's) becomes `message`, its `level` (else `severity`) the severity when we know
 * the value; any other line is the message as it is. Without a level in the line, the stream's
 * `level`/`severity`/`detected_level` label gives it.
 */
export function toShippedEvent(dataset: { dataset: string; label: string | undefined }, entry: LokiEntry, streamLabels: Record<string, string>): ShippedEvent {
  let labels = streamLabels;
  for (const name in entry.metadata) {
    if (labels === streamLabels) labels = { ...streamLabels };
    labels[name] = entry.metadata[name]!;
  }
  const parsed = jsonObject(entry.line);
  let message = entry.line;
  let severity: string | undefined;
  let payload: Record<string, unknown> = {};
  if (parsed) {
    const messageKey = typeof parsed.message === 'string' ? 'message' : typeof parsed.msg === 'string' ? 'msg' : '';
    if (messageKey) message = parsed[messageKey] as string;
    let levelKey = parsed.level !== undefined ? 'level' : parsed.severity !== undefined ? 'severity' : '';
    if (levelKey) {
      severity = shipperSeverity(parsed[levelKey]);
      // A level we do not know stays in the payload.
      if (severity === undefined) levelKey = '';
    }
    // The keys taken leave the payload as undefined, which JSON leaves out: `delete` would turn
    // the object into a dictionary, slow to serialise, and a copy costs a second object per line.
    payload = parsed;
    if (messageKey) parsed[messageKey] = undefined;
    if (levelKey) parsed[levelKey] = undefined;
  }
  for (const label of levelLabels) {
    if (severity !== undefined) break;
    if (labels[label] !== undefined) severity = shipperSeverity(labels[label]);
  }
  for (const _ in labels) {
    payload.labels = labels;
    break;
  }
  return { dataset: dataset.dataset, fields: { ts: entry.ts, severity, message, payload }, bytes: Buffer.byteLength(entry.line) };
}

/** The stream's labels without the one that named the dataset: they go to payload.labels. */
function payloadLabels(stream: LokiStream, dataset: { label: string | undefined }): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const name in stream.labels) if (name !== dataset.label) labels[name] = stream.labels[name]!;
  return labels;
}

/** Every entry of the request, in body order (so Idempotency-Key's derived ids repeat on a retry). */
export function toShippedEvents(streams: readonly LokiStream[]): ShippedEvent[] {
  const out: ShippedEvent[] = [];
  for (const stream of streams) {
    const dataset = streamDataset(stream.labels);
    const labels = payloadLabels(stream, dataset);
    for (const entry of stream.entries) out.push(toShippedEvent(dataset, entry, labels));
  }
  return out;
}
