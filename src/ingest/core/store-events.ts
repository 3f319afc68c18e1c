import type { Kysely } from 'kysely';
import type { AppContext } from '../../app/context.js';
import type { AuthContext } from '../../auth/auth-context.js';
import { AppError, storageError } from '../../errors/app-error.js';
import type { AppendResult, NewEvent } from '../../engine/event-store.js';
import type { Database } from '../../stores/metadata/schema.js';
import type { IngestTarget, ResolvedTarget } from '../../events/dataset-service.js';
import type { EventsRuntime } from '../../events/runtime.js';

/** A name's target for a request's events; throws the name's refusal (409 for an archived dataset). */
export type TargetOf = (name: string) => IngestTarget;

/**
 * A request's events built for given targets (parsed, validated, normalised, ids derived), with
 * what the route answers. Pure: it may run twice, when a target moved before the first event
 * was stored (DatasetService.createWith).
 */
export type BuildEvents<B extends { events: NewEvent[] }> = (target: TargetOf) => B;

/**
 * The write path of a request that names its datasets (every ingest protocol through insert.ts,
 * and log entries): resolves each name without creating anything, builds the events, and stores them
 * with storeEvents. A dataset that does not exist yet is created only by the write that stores
 * its first event, in the transaction that charges `events_month` for them: a request refused
 * whole (400, 402, 413…) or whose every event fails alone leaves no dataset, no audit entry and
 * no usage behind (docs/decisions.md, "Datasets are created by a stored event"). Once the
 * datasets exist (their targets cached), this is build and storeEvents, nothing more.
 */
export async function storeToTargets<B extends { events: NewEvent[] }>(
  ctx: AppContext,
  runtime: EventsRuntime,
  auth: Pick<AuthContext, 'tenant' | 'plan'>,
  names: Iterable<string>,
  build: BuildEvents<B>,
  onAppendError: (error: unknown) => void = () => {},
): Promise<B> {
  const { tenant, plan } = auth;
  const planned = new Map<string, ResolvedTarget>();
  for (const name of names) {
    try {
      planned.set(name, await runtime.datasets.resolveTarget(tenant, plan, name));
    } catch (error) {
      // An archived dataset refuses what goes to it; build decides whether that is a request or some items.
      if (!(error instanceof AppError) || error.code !== 'conflict') throw error;
      planned.set(name, error);
    }
  }
  const built = build(targetOf(planned));
  const needed = pendingNeeded(planned, built.events);
  if (!needed.size) {
    await storeEvents(ctx, runtime, auth, built.events, onAppendError);
    return built;
  }
  const charged = await runtime.datasets.createWith(tenant, plan, planned, needed, async (trx, settled) => {
    const events = settled === planned ? built : build(targetOf(settled));
    await charge(ctx, auth, events.events, trx);
    return { value: events, datasetIds: new Set(events.events.map((e) => e.datasetId)) };
  });
  await appendCharged(ctx, runtime, auth, charged.events, onAppendError);
  return charged;
}

function targetOf(targets: ReadonlyMap<string, ResolvedTarget>): TargetOf {
  return (name) => {
    const target = targets.get(name);
    if (target === undefined) throw new Error(`dataset "${name}" was not resolved for this request`);
    if (target instanceof AppError) throw target;
    return target;
  };
}

/** The names whose target is still to be created and that some event goes to. */
function pendingNeeded(planned: ReadonlyMap<string, ResolvedTarget>, events: readonly NewEvent[]): Set<string> {
  const byId = new Map<string, string[]>();
  for (const [name, target] of planned) {
    if (target instanceof AppError || !target.pending) continue;
    const names = byId.get(target.dataset.id) ?? [];
    names.push(name);
    byId.set(target.dataset.id, names);
  }
  const needed = new Set<string>();
  if (!byId.size) return needed;
  for (const event of events) {
    const names = byId.get(event.datasetId);
    if (!names) continue;
    for (const name of names) needed.add(name);
    byId.delete(event.datasetId);
    if (!byId.size) break;
  }
  return needed;
}

/** Charges `events_month` for the events (402 and nothing charged past the plan's quota). */
async function charge(ctx: AppContext, auth: Pick<AuthContext, 'tenant' | 'plan'>, events: readonly NewEvent[], db?: Kysely<Database>): Promise<void> {
  if (events.length) await ctx.quotas.consume(auth.tenant.orgId, auth.plan, 'events_month', events.length, db);
}

/**
 * The one write path for events into existing datasets: charge `events_month`, append durably,
 * give the quota back on failure and for de-duplicated retries, then wake live tail and hand
 * the events to match monitors.
 * Listeners run after the append has settled, so a failing listener cannot turn a durable
 * write into an error.
 */
async function storeEvents(
  ctx: AppContext,
  runtime: EventsRuntime,
  auth: Pick<AuthContext, 'tenant' | 'plan'>,
  events: readonly NewEvent[],
  onAppendError: (error: unknown) => void = () => {},
): Promise<AppendResult> {
  if (events.length === 0) return { stored: 0, duplicates: 0, lastSeq: 0 };
  await charge(ctx, auth, events);
  return appendCharged(ctx, runtime, auth, events, onAppendError);
}

/** storeEvents once the events are charged. */
async function appendCharged(
  ctx: AppContext,
  runtime: EventsRuntime,
  auth: Pick<AuthContext, 'tenant' | 'plan'>,
  events: readonly NewEvent[],
  onAppendError: (error: unknown) => void,
): Promise<AppendResult> {
  const { tenant } = auth;
  if (events.length === 0) return { stored: 0, duplicates: 0, lastSeq: 0 };
  let appended: AppendResult;
  try {
    appended = await runtime.store.append(tenant, events);
  } catch (error) {
    onAppendError(error);
    await ctx.quotas.release(tenant.orgId, 'events_month', events.length);
    throw Object.assign(storageError(), { cause: error });
  }
  // A retried event already stored is acknowledged again but counted once.
  if (appended.duplicates) await ctx.quotas.release(tenant.orgId, 'events_month', appended.duplicates);
  if (appended.stored) runtime.appended(tenant, appended.lastSeq, events, onAppendError);
  return appended;
}
