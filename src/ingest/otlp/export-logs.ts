import { badRequest } from '../../errors/app-error.js';
import { datasetNamePattern } from '../../events/dataset-service.js';
import { ingestItem, type IngestItem, type Inserter, type InsertRequest } from '../core/insert.js';
import type { DecodedLogs, DecodedRecord } from './decode.js';
import { intendedDataset, resourceSource, toEvent } from './mapping.js';

export interface ExportResult {
  accepted: number;
  /** Records refused alone (a limit, a bad severity, a dataset that takes no events); 0 = full success. */
  rejected: number;
  /** For partial_success.error_message: how many, and why the first few were refused. */
  errorMessage: string;
}

interface Rejection {
  path: string;
  message: string;
}

const namePattern = new RegExp(datasetNamePattern);
const shownRejections = 5;

/** Checks X-Ops-Dataset (one value, a dataset name); undefined when absent. */
export function datasetHeader(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) || !namePattern.test(value)) {
    throw badRequest(`X-Ops-Dataset must be one dataset name matching ${datasetNamePattern}`);
  }
  return value;
}

/**
 * Stores a decoded request's records through the shared insert path (DECISIONS §15;
 * core/insert.ts): each resource's records go to X-Ops-Dataset, else its service.name, else
 * `otel`, resolved like the dataset of a native ingest (created with its first stored record, the
 * plan's cap, overflow into `default`); each record is mapped (mapping.ts) to an event object,
 * then held to the limits and normalised as a native event is, failing alone; what passes is
 * charged to events_month and appended durably in one batch, then live tail is woken. Answers
 * once the batch is durable.
 */
export async function exportLogs(inserter: Inserter, by: InsertRequest, decoded: DecodedLogs, header: string | undefined): Promise<ExportResult> {
  const rejections: Rejection[] = [];
  const items: IngestItem[] = [];
  const paths: string[] = [];
  for (const resource of decoded.resources) {
    const name = intendedDataset(resource, header);
    const source = resourceSource(resource);
    const records = resource.scopes.flatMap((scope) => scope.records.map((record) => ({ scope, record })));
    if (!records.length) continue;
    if (!namePattern.test(name)) {
      reject(rejections, records.map((r) => r.record), `service.name "${name}" is not a dataset name (${datasetNamePattern}); send X-Ops-Dataset or use such a service.name`);
      continue;
    }
    for (const { scope, record } of records) {
      // Its size is measured on the mapped object (-1): the record's bytes on the wire are not JSON's.
      items.push(ingestItem(name, toEvent(resource, scope, record, source), undefined, undefined, undefined, undefined, undefined, -1, undefined));
      paths.push(record.path);
    }
  }

  // Named by a resource, an archived dataset refuses that resource's records only; named by the
  // header, it refuses the request (409), as native ingest does.
  const inserted = await inserter.insertItems(by, items, { archivedRefusesRequest: header !== undefined });
  for (const failure of inserted.failures) rejections.push({ path: paths[failure.index]!, message: failure.message });
  return { accepted: inserted.accepted, rejected: rejections.length, errorMessage: describe(rejections, decoded.records) };
}

function reject(rejections: Rejection[], records: ReadonlyArray<Pick<DecodedRecord, 'path'>>, message: string): void {
  for (const { path } of records) rejections.push({ path, message });
}

function describe(rejections: Rejection[], total: number): string {
  if (!rejections.length) return '';
  const shown = rejections
    .slice()
    .sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }))
    .slice(0, shownRejections)
    .map((r) => `${r.path}: ${r.message}`);
  const more = rejections.length > shownRejections ? `; and ${rejections.length - shownRejections} more` : '';
  return `${rejections.length} of ${total} log records were rejected: ${shown.join('; ')}${more}`;
}
