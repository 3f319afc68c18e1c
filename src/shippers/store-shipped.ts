import type { AppContext } from '../app/context.js';
import type { AuthContext } from '../auth/auth-context.js';
import { AppError } from '../errors/app-error.js';
import { datasetNamePattern, type IngestTarget } from '../events/dataset-service.js';
import { normaliseEvents } from '../events/ingest-parse.js';
import type { EventsRuntime } from '../events/runtime.js';
import { storeEvents } from '../events/store-events.js';
import { severities } from '../engine/event-record.js';
import type { NewEvent } from '../engine/event-store.js';

/** One log line or document, mapped to an event object as native ingest takes it (DECISIONS §9). */
export interface ShippedEvent {
  dataset: string;
  fields: Record<string, unknown>;
  /** Its size as sent (the line, the document), in bytes: bytes_raw and the 256 KB bound. */
  bytes: number;
}

/** Why one item was not stored, in our vocabulary; each protocol words it its own way. */
export interface ItemFailure {
  index: number;
  status: 400 | 409 | 413;
  code: 'bad_request' | 'conflict' | 'too_large';
  message: string;
}

export interface ShippedResult {
  /** Items refused alone, by their index in the request, in index order. */
  failures: ItemFailure[];
  /** Items accepted (stored, or recognised as already stored by their event_id). */
  accepted: number;
  /** The event id of each accepted item, by its index (undefined for a refused one). */
  eventIds: Array<string | undefined>;
}

const namePattern = new RegExp(datasetNamePattern);

/**
 * The shipper routes' way onto native ingest's write path: items are grouped by dataset, each
 * dataset resolved as a native ingest resolves it (created by first use, the plan's cap,
 * overflow into `default`), each item validated and normalised by native ingest (its limits:
 * 256 KB, payload depth and keys), failing alone; what passes is charged to events_month,
 * appended durably in one batch (client event ids de-duplicated), and handed to live tail and
 * match monitors by storeEvents. A dataset name that is not one, or an archived dataset,
 * refuses its items only. Anything else (quota, storage) refuses the request.
 */
export async function storeShipped(
  ctx: AppContext,
  events: EventsRuntime,
  auth: AuthContext,
  items: readonly ShippedEvent[],
  options: {
    onAppendError: (error: unknown) => void;
    /** With Idempotency-Key: gives the events the ids of a first run's (idempotencyOf(request)). */
    deriveEventIds?: (events: NewEvent[]) => void;
  },
): Promise<ShippedResult> {
  const failures: ItemFailure[] = [];
  const byDataset = new Map<string, { items: unknown[]; sizes: number[]; indexes: number[] }>();
  // A request names few datasets: each name is checked once, and the items of the last one go to its group directly.
  const badNames = new Set<string>();
  let lastName: string | undefined;
  let lastGroup: { items: unknown[]; sizes: number[]; indexes: number[] } | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    let group = item.dataset === lastName ? lastGroup : byDataset.get(item.dataset);
    if (!group) {
      if (badNames.has(item.dataset) || !namePattern.test(item.dataset)) {
        badNames.add(item.dataset);
        failures.push({ index, status: 400, code: 'bad_request', message: `"${item.dataset}" is not a dataset name (${datasetNamePattern})` });
        continue;
      }
      byDataset.set(item.dataset, (group = { items: [], sizes: [], indexes: [] }));
    }
    lastName = item.dataset;
    lastGroup = group;
    group.items.push(item.fields);
    group.sizes.push(item.bytes);
    group.indexes.push(index);
  }

  const stored: NewEvent[] = [];
  const storedByIndex: Array<NewEvent | undefined> = new Array<NewEvent | undefined>(items.length);
  for (const [name, group] of byDataset) {
    let target: IngestTarget;
    try {
      target = await events.datasets.ingestTarget(auth.tenant, auth.plan, name);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'conflict') throw error;
      for (const index of group.indexes) failures.push({ index, status: 409, code: 'conflict', message: error.message });
      continue;
    }
    const parsed = normaliseEvents(group.items, {
      datasetId: target.dataset.id,
      defaultSeverity: Math.max(0, severities.indexOf((target.dataset.default_severity ?? 'info') as (typeof severities)[number])),
      now: ctx.clock.now(),
      overflowFrom: target.overflowFrom,
    }, group.sizes);
    stored.push(...parsed.events);
    // normaliseEvents keeps the order of the items it accepts: pair them back with their indexes.
    const failed = new Set(parsed.failures.map((f) => f.index));
    let next = 0;
    group.indexes.forEach((index, i) => {
      if (!failed.has(i)) storedByIndex[index] = parsed.events[next++];
    });
    for (const failure of parsed.failures) {
      const index = group.indexes[failure.index]!;
      failures.push(
        failure.error.code === 'too_large'
          ? { index, status: 413, code: 'too_large', message: failure.error.message }
          : { index, status: 400, code: 'bad_request', message: failure.error.message },
      );
    }
  }
  failures.sort((a, b) => a.index - b.index);
  // The events' order depends on the body alone, so a retry under the same key derives the same ids.
  options.deriveEventIds?.(stored);
  await storeEvents(ctx, events, auth, stored, options.onAppendError);
  return { failures, accepted: stored.length, eventIds: Array.from(storedByIndex, (event) => event?.eventId) };
}
