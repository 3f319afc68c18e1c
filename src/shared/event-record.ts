/**
 * The contract between ingest, the event store, SOQL and live tail. The stored columns are
 * described once in engine/event-columns.ts; SOQL's `dataset` field is the dataset *name*, which the
 * compiler maps to dataset_id with the tenant's active datasets, so archived datasets are
 * never searched.
 */

/** Ordinal severities, lowest first; stored as their index. */
export const severities = ['debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Severity = (typeof severities)[number];

/** An event as the store hands it to SOQL's in-memory predicate and to live tail. */
/**
 * The payload object ingest wrote an event's JSON text from, carried beside the text while the
 * event is in this process, when JSON.parse of the text gives that object back (no lone
 * surrogate was replaced): match monitors read it instead of parsing the text
 * again, a third of their CPU per event. A symbol key, so JSON.stringify and structured clone
 * (the events node, the engine worker) never send it.
 */
export const parsedPayload = Symbol('parsed payload');

/** An event ready to store, already validated and normalised by ingest. */
export interface NewEvent {
  datasetId: string;
  /** Lower-case UUID. Client-sent ids are de-duplicated per tenant (a retry is stored once). */
  eventId: string;
  /** True when the client sent event_id (only those are checked for duplicates). */
  clientEventId: boolean;
  /** epoch ms */
  ts: number;
  /** index into `severities` */
  severity: number;
  bytesRaw: number;
  event: string;
  actor: string | null;
  source: string | null;
  message: string;
  /** JSON text of the payload object (`{}` when the event has none). */
  payload: string;
  /** The object `payload` was written from, when parsing the text gives it back (event-record.ts). */
  [parsedPayload]?: Record<string, unknown>;
}

export interface StoredEvent {
  /** Its place in the log that acknowledged it (tail-position.ts). */
  seq: number;
  /** That log's id on ClickHouse (every API process ingests through a log of its own); undefined: the single log. */
  log?: string;
  event_id: string;
  /** epoch milliseconds */
  ts: number;
  /** epoch milliseconds */
  ingested_at: number;
  /** dataset name (resolved from dataset_id by the store) */
  dataset: string;
  /** index into `severities` */
  severity: number;
  event: string;
  actor: string | null;
  source: string | null;
  message: string;
  /**
   * The payload object as JSON text, as stored (ingest wrote it with JSON.stringify): the API
   * embeds it without parsing it again.
   */
  payloadJson: string;
  bytes_raw: number;
  /** The payload object, when the event still has it from ingest (see `parsedPayload`). */
  [parsedPayload]?: Record<string, unknown>;
}
