import { shippedEvent, type ShippedEvent } from '../store-shipped.js';
import { shipperSeverity } from '../severity.js';
import { noMetadata, type LokiEntry, type LokiStream } from './decode.js';

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

/** The severity the labels give a line without a level of its own: the first of levelLabels whose value we know. */
function labelSeverity(labels: Record<string, string>): string | undefined {
  for (const label of levelLabels) {
    const value = labels[label];
    if (value === undefined) continue;
    const severity = shipperSeverity(value);
    if (severity !== undefined) return severity;
  }
  return undefined;
}

/**
 * What every entry of a stream shares, worked out once per stream (labels are per stream): the
 * dataset, `payload.labels` (the stream's labels but the one naming the dataset), whether there
 * are any, the severity they give, and the stored payload of a line that is not JSON.
 */
export interface StreamMapping {
  dataset: string;
  labels: Record<string, string>;
  hasLabels: boolean;
  severity: string | undefined;
  /**
   * The payload text of a plain-text line (what Promtail and Alloy send tailing a file): its
   * payload is `{labels}` alone, so every such line of the stream stores the same JSON, written
   * once here instead of once per line (serialising it was a large part of such a line's
   * event-loop CPU).
   */
  plainPayload: string;
}

/** JSON.stringify of a payload holding only these labels (`{}` without any). */
const plainPayloadOf = (labels: Record<string, string>, hasLabels: boolean): string => (hasLabels ? JSON.stringify({ labels }) : '{}');

export function streamMapping(streamLabels: Record<string, string>): StreamMapping {
  const { dataset, label } = streamDataset(streamLabels);
  const labels: Record<string, string> = {};
  for (const name in streamLabels) if (name !== label) labels[name] = streamLabels[name]!;
  const hasLabels = anyKey(labels);
  return { dataset, labels, hasLabels, severity: labelSeverity(labels), plainPayload: plainPayloadOf(labels, hasLabels) };
}

/** Whether the object has a key to write (a label named `__proto__` is not set by an assignment, so not one). */
function anyKey(labels: Record<string, string>): boolean {
  for (const _ in labels) return true;
  return false;
}

/**
 * One entry of a stream → an event for native ingest (docs/shippers.md): `ts` the entry's
 * timestamp; `payload.labels` the stream's labels but the one naming the dataset, with the entry's
 * structured metadata; a JSON-object line is also parsed into the payload: its string `message`
 * (else `msg`, pino's) becomes `message`, its `level` (else `severity`) the severity when we know
 * the value; any other line is the message as it is. Without a level in the line, the stream's
 * `level`/`severity`/`detected_level` label gives it (or the entry's metadata of that name).
 */
export function toShippedEvent(stream: StreamMapping, entry: LokiEntry): ShippedEvent {
  let labels = stream.labels;
  let hasLabels = stream.hasLabels;
  let fromLabels = stream.severity;
  let plainPayload: string | undefined = stream.plainPayload;
  if (entry.metadata !== noMetadata) {
    for (const name in entry.metadata) {
      if (labels === stream.labels) labels = { ...stream.labels };
      labels[name] = entry.metadata[name]!;
    }
    if (labels !== stream.labels) {
      hasLabels = anyKey(labels);
      fromLabels = labelSeverity(labels);
      plainPayload = undefined;
    }
  }
  const parsed = jsonObject(entry.line);
  let message = entry.line;
  let severity: string | undefined;
  let payload: Record<string, unknown>;
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
  } else payload = {};
  if (hasLabels) payload.labels = labels;
  // A plain-text line with the stream's labels only: the stream's text (normaliseMapped writes any other payload).
  const payloadText = parsed ? undefined : plainPayload;
  return shippedEvent(stream.dataset, entry.ts, severity ?? fromLabels, message, payload, undefined, Buffer.byteLength(entry.line), payloadText);
}

/** Every entry of the request, in body order (so Idempotency-Key's derived ids repeat on a retry). */
export function toShippedEvents(streams: readonly LokiStream[]): ShippedEvent[] {
  const out: ShippedEvent[] = [];
  for (const stream of streams) {
    const mapping = streamMapping(stream.labels);
    for (const entry of stream.entries) out.push(toShippedEvent(mapping, entry));
  }
  return out;
}
