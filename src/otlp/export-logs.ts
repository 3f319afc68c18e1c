import type { AppContext } from '../app/context.js';
import type { AuthContext } from '../auth/auth-context.js';
import { AppError, badRequest } from '../errors/app-error.js';
import { datasetNamePattern, type IngestTarget } from '../events/dataset-service.js';
import { normaliseEvents } from '../events/ingest-parse.js';
import type { EventsRuntime } from '../events/runtime.js';
import { storeToTargets, type TargetOf } from '../events/store-events.js';
import { severities } from '../shared/event-record.js';
import type { NewEvent } from '../engine/event-store.js';
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
 * Stores a decoded request's records through native ingest's write path (DECISIONS §15): each
 * resource's records go to X-Ops-Dataset, else its service.name, else `otel`, resolved like the
 * dataset of a native ingest (created with its first stored record, the plan's cap, overflow into `default`);
 * each record is mapped (mapping.ts), then validated and normalised by native ingest, failing
 * alone; what passes is charged to events_month and appended durably in one batch, then live
 * tail is woken. Answers once the batch is durable.
 */
export async function exportLogs(
  ctx: AppContext,
  events: EventsRuntime,
  auth: AuthContext,
  decoded: DecodedLogs,
  header: string | undefined,
  onAppendError: (error: unknown) => void,
  /** With Idempotency-Key: gives the events the ids of a first run's (idempotencyOf(request)). */
  deriveEventIds?: (events: NewEvent[]) => void,
): Promise<ExportResult> {
  const rejections: Rejection[] = [];
  const byDataset = new Map<string, { items: unknown[]; paths: string[] }>();
  for (const resource of decoded.resources) {
    const name = intendedDataset(resource, header);
    const source = resourceSource(resource);
    const records = resource.scopes.flatMap((scope) => scope.records.map((record) => ({ scope, record })));
    if (!records.length) continue;
    if (!namePattern.test(name)) {
      reject(rejections, records.map((r) => r.record), `service.name "${name}" is not a dataset name (${datasetNamePattern}); send X-Ops-Dataset or use such a service.name`);
      continue;
    }
    const group = byDataset.get(name) ?? { items: [], paths: [] };
    byDataset.set(name, group);
    for (const { scope, record } of records) {
      group.items.push(toEvent(resource, scope, record, source));
      group.paths.push(record.path);
    }
  }

  const now = ctx.clock.now();
  // A new dataset is created with its first stored record: a request refused whole creates none.
  const built = await storeToTargets(
    ctx,
    events,
    auth,
    byDataset.keys(),
    (targetOf) => buildEvents(byDataset, rejections.slice(), targetOf, header, now, deriveEventIds),
    onAppendError,
  );
  return { accepted: built.events.length, rejected: built.rejections.length, errorMessage: describe(built.rejections, decoded.records) };
}

/**
 * The request's events for its datasets' targets, with the rejected records (those found before
 * in `rejections`); built again when a target moved before the first record was stored.
 */
function buildEvents(
  byDataset: ReadonlyMap<string, { items: unknown[]; paths: string[] }>,
  rejections: Rejection[],
  targetOf: TargetOf,
  header: string | undefined,
  now: number,
  deriveEventIds: ((events: NewEvent[]) => void) | undefined,
): { events: NewEvent[]; rejections: Rejection[] } {
  const stored: NewEvent[] = [];
  for (const [name, group] of byDataset) {
    let target: IngestTarget;
    try {
      target = targetOf(name);
    } catch (error) {
      // Named by a resource, an archived dataset refuses that resource's records only; named by
      // the header, it refuses the request (409), as native ingest does.
      if (header !== undefined || !(error instanceof AppError) || error.code !== 'conflict') throw error;
      reject(rejections, group.paths.map((path) => ({ path })), error.message);
      continue;
    }
    const parsed = normaliseEvents(group.items, {
      datasetId: target.dataset.id,
      defaultSeverity: Math.max(0, severities.indexOf((target.dataset.default_severity ?? 'info') as (typeof severities)[number])),
      now,
      overflowFrom: target.overflowFrom,
    });
    stored.push(...parsed.events);
    for (const failure of parsed.failures) rejections.push({ path: group.paths[failure.index]!, message: failure.error.message });
  }

  // The events' order depends on the body alone, so a retry derives the same ids: stored once.
  deriveEventIds?.(stored);
  return { events: stored, rejections };
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
