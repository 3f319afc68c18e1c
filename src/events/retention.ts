import type { AppContext } from '../app/context.js';
import type { EventsRuntime } from './runtime.js';

export interface RetentionResult {
  datasets: number;
  events_deleted: number;
}

const dayMs = 86_400_000;

/** Deletes every dataset's events older than its retention (capped by the plan's). */
export async function runRetention(ctx: AppContext, runtime: EventsRuntime): Promise<RetentionResult> {
  const now = ctx.clock.now();
  const work = await runtime.datasets.allForRetention();
  let deleted = 0;
  for (const dataset of work) {
    deleted += await runtime.store.deleteBefore(dataset.tenant, dataset.id, now - dataset.retentionDays * dayMs);
  }
  return { datasets: work.length, events_deleted: deleted };
}
