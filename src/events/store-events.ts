import type { AppContext } from '../app/context.js';
import type { AuthContext } from '../auth/auth-context.js';
import { storageError } from '../errors/app-error.js';
import type { AppendResult, NewEvent } from '../engine/event-store.js';
import type { EventsRuntime } from './runtime.js';

/**
 * The one write path for events (ingest and log entries): charge `events_month`, append
 * durably, give the quota back on failure and for de-duplicated retries, then wake live tail
 * and hand the events to match monitors.
 * Listeners run after the append has settled, so a failing listener cannot turn a durable
 * write into an error.
 */
export async function storeEvents(
  ctx: AppContext,
  runtime: EventsRuntime,
  auth: Pick<AuthContext, 'tenant' | 'plan'>,
  events: readonly NewEvent[],
  onAppendError: (error: unknown) => void = () => {},
): Promise<AppendResult> {
  const { tenant, plan } = auth;
  if (events.length === 0) return { stored: 0, duplicates: 0, lastSeq: 0 };
  await ctx.quotas.consume(tenant.orgId, plan, 'events_month', events.length);
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
