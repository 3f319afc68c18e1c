/**
 * The contract between ingest, the event store, SOQL and live tail.
 *
 * DuckDB table `events` (one table for every tenant; the tenant first so the store can always
 * filter on it):
 *
 *   seq          BIGINT    NOT NULL  -- ingestion order, strictly increasing per store; tail resumes on it
 *   tenant       UINTEGER  NOT NULL  -- (org_id, project_id, mode) as an id of `event_tenants`; only the store maps it
 *   dataset_id   VARCHAR   NOT NULL  -- internal dataset id, so a rename touches no event
 *   event_id     UUID      NOT NULL
 *   ts           BIGINT    NOT NULL  -- epoch milliseconds
 *   ingested_at  BIGINT    NOT NULL  -- epoch milliseconds
 *   severity     UTINYINT  NOT NULL  -- index into `severities`
 *   event        VARCHAR   NOT NULL
 *   actor        VARCHAR             -- NULL when absent
 *   source       VARCHAR             -- NULL when absent
 *   message      VARCHAR   NOT NULL
 *   payload      VARCHAR   NOT NULL  -- JSON text of an object; nested objects kept nested
 *   bytes_raw    INTEGER   NOT NULL
 *
 * SOQL's `dataset` field is the dataset *name*; the compiler maps names to dataset_id with the
 * tenant's active datasets, so archived datasets are never searched.
 */

/** Ordinal severities, lowest first; stored as their index. */
export const severities = ['debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Severity = (typeof severities)[number];

/** An event as the store hands it to SOQL's in-memory predicate and to live tail. */
export interface StoredEvent {
  seq: number;
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
}
