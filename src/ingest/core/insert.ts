import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../app/context.js';
import type { AuthContext } from '../../auth/auth-context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { AppError } from '../../errors/app-error.js';
import { datasetNamePattern, type IngestTarget } from '../../events/dataset-service.js';
import type { EventsRuntime } from '../../events/runtime.js';
import { severities } from '../../shared/event-record.js';
import type { NewEvent } from '../../engine/event-store.js';
import { idempotencyOf } from '../../idempotency/index.js';
import { normaliseMapped, type IngestDefaults, type MappedEvent, type PlainPayload } from './normalise.js';
import { storeToTargets } from './store-events.js';

/**
 * The one insert path of every ingest protocol (docs/ingest.md). A protocol reads its wire format
 * and hands over its events in one of two ways:
 * - as items (Inserter.insertItems): one IngestItem per log line, record or document, each naming
 *   its dataset, the way the Loki and Elasticsearch routes, OTLP, and any input added beside them
 *   (a game server's log stream, syslog) plug in;
 * - built per dataset by the protocol itself (Inserter.insertEvents), given each dataset's
 *   defaults: native NDJSON/JSON, which maps each line as it parses it.
 * Either way each dataset name is resolved once (created with its first stored event, the plan's
 * cap, overflow into `default`), each event gets its dataset's defaults (the request's time, the
 * dataset's default severity, `payload._dataset` of an overflow), is held to the limits and mapped
 * by the one normalisation (normalise.ts: timestamps, severity), failing alone; a retry under an
 * Idempotency-Key gets the first run's event ids; and what passes is charged to `events_month`,
 * appended durably and handed to live tail and match monitors (store-events.ts).
 */

/** Whose events an insert stores, and what it reports to. */
export interface InsertRequest {
  /** The tenant the events are stored for, and the plan that bounds them (quota, dataset cap). */
  auth: Pick<AuthContext, 'tenant' | 'plan'>;
  /** Hears a failed append, or a failing live-tail wake-up (the caller logs them). */
  onAppendError: (error: unknown) => void;
  /** With Idempotency-Key: gives the events the ids of a first run's (idempotencyOf(request)). */
  deriveEventIds: ((events: NewEvent[]) => void) | undefined;
}

/** The InsertRequest of an HTTP request: its token's tenant and plan, its log, its Idempotency-Key (401 without a token). */
export function insertRequest(request: FastifyRequest): InsertRequest {
  const auth = requireAuth(request);
  const keyed = idempotencyOf(request);
  return {
    auth,
    onAppendError: (error) => request.log.error({ err: error }, 'event append failed'),
    deriveEventIds: keyed ? (events) => keyed.deriveEventIds(events) : undefined,
  };
}

/** A named dataset's defaults for its events; throws the name's refusal (409 for an archived dataset). */
export type DefaultsOf = (name: string) => IngestDefaults;

/**
 * One log line, record or document, read into what the one mapping takes (MappedEvent: the JSON
 * object and what the protocol knows besides, DECISIONS §21), and the dataset it goes to.
 */
export interface IngestItem extends MappedEvent {
  dataset: string;
}

/** An IngestItem, built in one place so that every protocol's have one shape (one hidden class for normaliseMapped). */
export function ingestItem(
  dataset: string,
  object: Record<string, unknown> | undefined,
  line: string | undefined,
  ts: number | undefined,
  severity: number | undefined,
  eventId: string | undefined,
  labels: Record<string, string> | undefined,
  bytes: number,
  plain: PlainPayload | undefined,
): IngestItem {
  return { object, line, ts, severity, eventId, labels, bytes, plain, dataset };
}

/** Why one item was not stored, in our vocabulary; each protocol words it its own way. */
export interface ItemFailure {
  index: number;
  status: 400 | 409 | 413;
  code: 'bad_request' | 'conflict' | 'too_large';
  message: string;
}

export interface InsertedItems {
  /** Items refused alone, by their index in the request, in index order. */
  failures: ItemFailure[];
  /** Items accepted (stored, or recognised as already stored by their event_id). */
  accepted: number;
  /** The event id of each accepted item, by its index (undefined for a refused one). */
  eventIds: Array<string | undefined>;
}

const namePattern = new RegExp(datasetNamePattern);

/** A dataset's defaults: its id, its default severity, the request's time, the intended name of an overflow into `default`. */
function defaultsOf(target: IngestTarget, now: number): IngestDefaults {
  return {
    datasetId: target.dataset.id,
    defaultSeverity: Math.max(0, severities.indexOf((target.dataset.default_severity ?? 'info') as (typeof severities)[number])),
    now,
    overflowFrom: target.overflowFrom,
  };
}

/** The shared insert path, opened once over the events runtime and handed to every protocol. */
export class Inserter {
  constructor(
    private readonly ctx: AppContext,
    private readonly events: EventsRuntime,
  ) {}

  /**
   * Events a protocol builds per dataset itself (native ingest). `build` gets each named
   * dataset's defaults (a refusal it does not catch refuses the request) and must be pure: it
   * runs again when a target moved before the first event was stored (storeToTargets). A dataset
   * that does not exist yet is created with its first stored event: a request refused whole
   * (400, 402, 413…), or whose every event fails, creates none.
   */
  insertEvents<B extends { events: NewEvent[] }>(by: InsertRequest, names: Iterable<string>, build: (defaults: DefaultsOf) => B): Promise<B> {
    const now = this.ctx.clock.now();
    return storeToTargets(
      this.ctx,
      this.events,
      by.auth,
      names,
      (targetOf) => {
        const built = build((name) => defaultsOf(targetOf(name), now));
        // The events' order depends on the body alone, so a retry under the same key derives the same ids: stored once.
        by.deriveEventIds?.(built.events);
        return built;
      },
      by.onAppendError,
    );
  }

  /**
   * Items grouped by dataset, each item held to the limits (256 KB, payload depth and keys) and
   * mapped by normaliseMapped with its dataset's defaults, failing alone. A dataset name that is
   * not one refuses its items only; so does an archived dataset (409), unless
   * `archivedRefusesRequest` (a dataset named by the request, not by its items). Anything else
   * (quota, storage) refuses the request.
   */
  async insertItems(by: InsertRequest, items: readonly IngestItem[], options: { archivedRefusesRequest?: boolean } = {}): Promise<InsertedItems> {
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

    const built = await this.insertEvents(by, byDataset.keys(), (defaults) =>
      buildItems(items.length, byDataset, failures.slice(), defaults, options.archivedRefusesRequest ?? false),
    );
    return { failures: built.failures, accepted: built.events.length, eventIds: Array.from(built.storedByIndex, (event) => event?.eventId) };
  }
}

/**
 * The request's events for its datasets' defaults, with the items' failures (those found before
 * appended to `failures`); built again when a target moved before the first event was stored.
 */
function buildItems(
  count: number,
  byDataset: ReadonlyMap<string, { items: MappedEvent[]; indexes: number[] }>,
  failures: ItemFailure[],
  defaults: DefaultsOf,
  archivedRefusesRequest: boolean,
): { events: NewEvent[]; failures: ItemFailure[]; storedByIndex: Array<NewEvent | undefined> } {
  const stored: NewEvent[] = [];
  const storedByIndex: Array<NewEvent | undefined> = new Array<NewEvent | undefined>(count);
  for (const [name, group] of byDataset) {
    let d: IngestDefaults;
    try {
      d = defaults(name);
    } catch (error) {
      if (archivedRefusesRequest || !(error instanceof AppError) || error.code !== 'conflict') throw error;
      for (const index of group.indexes) failures.push({ index, status: 409, code: 'conflict', message: error.message });
      continue;
    }
    const parsed = normaliseMapped(group.items, d);
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
  return { events: stored, failures, storedByIndex };
}
