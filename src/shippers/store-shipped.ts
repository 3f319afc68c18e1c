import type { AppContext } from '../app/context.js';
import type { AuthContext } from '../auth/auth-context.js';
import { AppError } from '../errors/app-error.js';
import { datasetNamePattern, type IngestTarget } from '../events/dataset-service.js';
import { normaliseMapped, type MappedEvent, type PlainPayload } from '../events/ingest-parse.js';
import type { EventsRuntime } from '../events/runtime.js';
import { storeToTargets, type TargetOf } from '../events/store-events.js';
import { severities } from '../shared/event-record.js';
import type { NewEvent } from '../engine/event-store.js';

/**
 * One log line or document, read into what native ingest's mapping takes (MappedEvent: the JSON
 * object and what the route knows besides, DECISIONS §21), and the dataset it goes to.
 */
export interface ShippedEvent extends MappedEvent {
  dataset: string;
}

/** A ShippedEvent, built in one place so that every route's have one shape (one hidden class for normaliseMapped). */
export function shippedEvent(
  dataset: string,
  object: Record<string, unknown> | undefined,
  line: string | undefined,
  ts: number | undefined,
  severity: number | undefined,
  eventId: string | undefined,
  labels: Record<string, string> | undefined,
  bytes: number,
  plain: PlainPayload | undefined,
): ShippedEvent {
  return { object, line, ts, severity, eventId, labels, bytes, plain, dataset };
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
 * dataset resolved as a native ingest resolves it (created with its first stored event, the plan's
 * cap, overflow into `default`), each item validated and normalised by native ingest (its limits:
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
  const byDataset = new Map<string, { items: MappedEvent[]; indexes: number[] }>();
  // A request names few datasets: each name is checked once, and the items of the last one go to its group directly.
  const badNames = new Set<string>();
  let lastName: string | undefined;
  let lastGroup: { items: MappedEvent[]; indexes: number[] } | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    let group = item.dataset === lastName ? lastGroup : byDataset.get(item.dataset);
    if (!group) {
      if (badNames.has(item.dataset) || !namePattern.test(item.dataset)) {
        badNames.add(item.dataset);
        failures.push({ index, status: 400, code: 'bad_request', message: `"${item.dataset}" is not a dataset name (${datasetNamePattern})` });
        continue;
      }
      byDataset.set(item.dataset, (group = { items: [], indexes: [] }));
    }
    lastName = item.dataset;
    lastGroup = group;
    group.items.push(item);
    group.indexes.push(index);
  }

  const now = ctx.clock.now();
  // A new dataset is created with its first stored event: a request refused whole creates none.
  const built = await storeToTargets(
    ctx,
    events,
    auth,
    byDataset.keys(),
    (targetOf) => buildEvents(items.length, byDataset, failures.slice(), targetOf, now, options.deriveEventIds),
    options.onAppendError,
  );
  return { failures: built.failures, accepted: built.events.length, eventIds: Array.from(built.storedByIndex, (event) => event?.eventId) };
}

/**
 * The request's events for its datasets' targets, with the items' failures (those found before
 * appended to `failures`); built again when a target moved before the first event was stored.
 */
function buildEvents(
  count: number,
  byDataset: ReadonlyMap<string, { items: MappedEvent[]; indexes: number[] }>,
  failures: ItemFailure[],
  targetOf: TargetOf,
  now: number,
  deriveEventIds: ((events: NewEvent[]) => void) | undefined,
): { events: NewEvent[]; failures: ItemFailure[]; storedByIndex: Array<NewEvent | undefined> } {
  const stored: NewEvent[] = [];
  const storedByIndex: Array<NewEvent | undefined> = new Array<NewEvent | undefined>(count);
  for (const [name, group] of byDataset) {
    let target: IngestTarget;
    try {
      target = targetOf(name);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'conflict') throw error;
      for (const index of group.indexes) failures.push({ index, status: 409, code: 'conflict', message: error.message });
      continue;
    }
    const parsed = normaliseMapped(group.items, {
      datasetId: target.dataset.id,
      defaultSeverity: Math.max(0, severities.indexOf((target.dataset.default_severity ?? 'info') as (typeof severities)[number])),
      now,
      overflowFrom: target.overflowFrom,
    });
    stored.push(...parsed.events);
    // normaliseMapped keeps the order of the items it accepts: pair them back with their indexes.
    // (Its failures come in index order too.)
    let next = 0;
    let nextFailure = 0;
    for (let i = 0; i < group.indexes.length; i++) {
      if (parsed.failures[nextFailure]?.index === i) nextFailure++;
      else storedByIndex[group.indexes[i]!] = parsed.events[next++];
    }
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
  deriveEventIds?.(stored);
  return { events: stored, failures, storedByIndex };
}
