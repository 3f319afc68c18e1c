import type { Tenant } from '../../tenancy/tenant.js';
import type { NewEvent } from './event-store.js';

/**
 * The body of one write-ahead log record: one caller's events of one tenant, as JSON text
 * (JSON.stringify / JSON.parse are the cheapest codecs V8 has for this mix of short strings;
 * a hand-made binary layout measured no faster). Row layout, by position:
 *   [datasetId, eventId, ts, severity, event, actor, source, message, payload, bytesRaw]
 * The record header numbers the rows: row i has seq firstSeq + i.
 */
export interface EventBatch {
  tenant: Tenant;
  /** epoch ms, one value for the batch */
  ingestedAt: number;
  rows: BatchRow[];
}

export type BatchRow = [
  datasetId: string,
  eventId: string,
  ts: number,
  severity: number,
  event: string,
  actor: string | null,
  source: string | null,
  message: string,
  payload: string,
  bytesRaw: number,
];

export function encodeBatch(tenant: Tenant, ingestedAt: number, events: readonly NewEvent[]): Buffer {
  const rows = events.map((e): BatchRow => [e.datasetId, e.eventId, e.ts, e.severity, e.event, e.actor, e.source, e.message, e.payload, e.bytesRaw]);
  return Buffer.from(JSON.stringify([tenant.orgId, tenant.projectId, tenant.mode, ingestedAt, rows]));
}

export function decodeBatch(body: Buffer): EventBatch {
  const [orgId, projectId, mode, ingestedAt, rows] = JSON.parse(body.toString('utf8')) as [string, string, Tenant['mode'], number, BatchRow[]];
  return { tenant: { orgId, projectId, mode }, ingestedAt, rows };
}
