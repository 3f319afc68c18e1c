/**
 * Hot payload keys in the background (docs/events-engine.md "Hot payload keys"): in
 * every process that loads events (the embedded store's owner — the single server, or the events
 * node of `serve --workers` —, and on ClickHouse every API process, each loading its own log), a
 * task looks every OPS_HOT_KEYS_INTERVAL_MS at the datasets its store took events of:
 *
 * - it takes the dataset's turn in the metadata store (`dataset_hot_key_turns`, one row per
 *   dataset, `turn_until` set only where it has passed: one process per dataset per turn,
 *   however many load it);
 * - with the turn and OPS_HOT_KEYS_AUTO, a dataset without a background choice yet (or whose
 *   last is 60 intervals old) has its keys chosen from schema discovery's sample (a fresh one:
 *   the events of the last 24 hours' ts; a dataset with none there waits for its next events)
 *   (HotKeyService.chooseInBackground: the keys a schema request would choose, keeping those
 *   hot now), stored in the metadata as PATCH and schema requests store them. A first choice
 *   waits until the sample holds `readySample` events or the dataset's first events are one
 *   interval old, so a dataset's keys are chosen within two intervals of its first events,
 *   from more than its first few;
 * - without the turn it hands its store the keys another process chose (each ingester writes
 *   the columns of the rows it loads);
 * - with the turn it asks the store to fill the columns of the dataset's rows stored before its
 *   current keys (EventStore.backfillHotKeys), and keeps asking at each tick while rows are left.
 *   A dataset whose keys changed (a PATCH, a schema request) is noted by the store without new
 *   events; while another process holds its turn, it is looked at again for `keysChangedTicks`
 *   ticks — long enough for the turn to pass here, unless that process keeps looking after it.
 *
 * Datasets whose first choice waits, and those still being filled, stay on the list for the
 * next tick even without new events.
 */
import type { Kysely } from 'kysely';
import type { Logger } from '../kernel/logger.js';
import type { EventStore } from '../engine/event-store.js';
import type { Clock } from '../shared/clock.js';
import { iso } from '../shared/clock.js';
import type { Database } from '../stores/metadata/schema.js';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import type { Dataset } from './dataset-service.js';
import type { HotKeyService } from './hot-keys.js';
import type { SchemaService } from './schema-service.js';

/** Metadata table `dataset_hot_key_turns` (migration 0022). */
export interface DatasetHotKeyTurnsTable {
  dataset_id: string;
  /** Until when the process that took the turn looks after the dataset (ISO). */
  turn_until: string;
  /** When its keys were last chosen in the background (ISO; null: never). */
  chosen_at: string | null;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    dataset_hot_key_turns: DatasetHotKeyTurnsTable;
  }
}

/** A first choice is made once the sample holds this many events (or the dataset's first events are an interval old). */
export const readySample = 1_000;
/** Intervals between two background choices of one dataset. */
export const rechooseIntervals = 60;
/** Datasets looked at per tick (the rest at the next), and samples taken per tick. */
const perTick = 1_000;
const samplesPerTick = 100;
/** Ticks a dataset whose keys changed is looked at again while another process holds its turn. */
const keysChangedTicks = 3;
/** Datasets remembered between ticks (first seen, waiting, being filled); past it the oldest go. */
const maxRemembered = 100_000;

export interface HotKeyChooserDeps {
  db: Kysely<Database>;
  store: EventStore;
  hotKeys: HotKeyService;
  schemas: SchemaService;
  clock: Clock;
  intervalMs: number;
  log: Logger;
}

interface Remembered {
  tenant: Tenant;
  datasetId: string;
  /** When this process first saw the dataset take events. */
  firstAt: number;
  /** Looked at again at the next tick without new events: its first choice waits, or its rows are being filled. */
  again: boolean;
  /** Ticks left to look again while another process holds the turn, after its keys changed. */
  keysChanged: number;
}

export class HotKeyChooser {
  private readonly remembered = new Map<string, Remembered>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: HotKeyChooserDeps) {}

  /** Ticks every interval (a tick still running when the next is due makes it skip). */
  start(): void {
    this.timer = setInterval(() => {
      if (this.running || this.stopped) return;
      this.running = this.tick()
        .catch((error: unknown) => this.deps.log.warn({ err: error }, 'hot keys: the background task failed; it runs again at the next interval'))
        .finally(() => {
          this.running = undefined;
        });
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One look at the datasets the store took events of since the last tick, and those waiting. */
  async tick(): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    for (const { tenant, datasetId, keysChanged } of store.takeActiveDatasets?.() ?? []) {
      const key = `${tenantKey(tenant)}|${datasetId}`;
      let known = this.remembered.get(key);
      if (!known) {
        if (this.remembered.size >= maxRemembered) this.remembered.delete(this.remembered.keys().next().value!);
        known = { tenant, datasetId, firstAt: now, again: true, keysChanged: 0 };
        this.remembered.set(key, known);
      }
      known.again = true;
      if (keysChanged) known.keysChanged = keysChangedTicks;
    }
    const due = [...this.remembered.values()].filter((r) => r.again).slice(0, perTick);
    let samples = 0;
    for (let i = 0; i < due.length && !this.stopped; i += 200) {
      const group = due.slice(i, i + 200);
      for (const r of group) r.again = false;
      const ids = group.map((r) => r.datasetId);
      const rows = await this.deps.db.selectFrom('datasets').selectAll().where('id', 'in', ids).execute();
      const byId = new Map(rows.map((r) => [r.id, r]));
      const turns = await this.takeTurns(ids, now);
      for (const r of group) {
        if (this.stopped) return;
        const dataset = byId.get(r.datasetId);
        // Gone or archived (ingest to it is refused): nothing to look after.
        if (!dataset || dataset.archived_at !== null || dataset.org_id !== r.tenant.orgId || dataset.project_id !== r.tenant.projectId || dataset.mode !== r.tenant.mode) continue;
        try {
          const turn = turns.get(r.datasetId);
          if (turn === undefined) {
            if (r.keysChanged > 0) {
              r.keysChanged--;
              r.again = true;
            }
            await this.deps.hotKeys.sync(r.tenant, dataset);
            continue;
          }
          r.keysChanged = 0;
          const chosenAt = turn === null ? undefined : Date.parse(turn);
          const choose = this.deps.hotKeys.auto && (chosenAt === undefined || now - chosenAt >= rechooseIntervals * this.deps.intervalMs);
          if (choose && samples < samplesPerTick) {
            samples++;
            const outcome = await this.choose(r, dataset, chosenAt === undefined, now);
            if (outcome === 'chosen') await this.chosen(r.datasetId, now);
            // Waiting for more events; none in the sample's window (old ts): looked at when it takes events again.
            else if (outcome === 'wait') r.again = true;
          } else {
            if (choose) r.again = true;
            await this.deps.hotKeys.sync(r.tenant, dataset);
          }
          if (await store.backfillHotKeys?.(r.tenant, r.datasetId)) r.again = true;
        } catch (error) {
          r.again = true;
          this.deps.log.warn({ err: error, dataset_id: r.datasetId }, 'hot keys: a dataset could not be looked after; it is looked at again at the next interval');
        }
      }
    }
  }

  /**
   * A fresh sample (also what schema requests are answered from next), and the choice when it
   * is ready (a first choice waits for readySample events or an interval).
   */
  private async choose(r: Remembered, dataset: Dataset, first: boolean, now: number): Promise<'chosen' | 'wait' | 'empty'> {
    const { stats } = await this.deps.schemas.schemaOf(r.tenant, dataset, { fresh: true });
    const outcome = stats.sampledEvents === 0 ? 'empty' : first && stats.sampledEvents < readySample && now - r.firstAt < this.deps.intervalMs ? 'wait' : 'chosen';
    if (outcome === 'chosen') await this.deps.hotKeys.chooseInBackground(r.tenant, dataset, stats);
    else await this.deps.hotKeys.sync(r.tenant, dataset);
    return outcome;
  }

  /**
   * Takes the turn of each dataset whose turn has passed (or that has none yet): half an
   * interval, so that the next tick of any process may take it again. Answers the datasets
   * taken, with when their keys were last chosen (null: never).
   */
  private async takeTurns(ids: readonly string[], now: number): Promise<Map<string, string | null>> {
    const nowText = iso(now);
    const until = iso(now + Math.max(1, Math.floor(this.deps.intervalMs / 2)));
    const taken = new Map<string, string | null>();
    const updated = await this.deps.db
      .updateTable('dataset_hot_key_turns')
      .set({ turn_until: until })
      .where('dataset_id', 'in', ids)
      .where('turn_until', '<=', nowText)
      .returning(['dataset_id', 'chosen_at'])
      .execute();
    for (const t of updated) taken.set(t.dataset_id, t.chosen_at);
    const existing = new Set(
      (await this.deps.db.selectFrom('dataset_hot_key_turns').select('dataset_id').where('dataset_id', 'in', ids).execute()).map((t) => t.dataset_id),
    );
    const fresh = ids.filter((id) => !existing.has(id));
    if (fresh.length) {
      const inserted = await this.deps.db
        .insertInto('dataset_hot_key_turns')
        .values(fresh.map((id) => ({ dataset_id: id, turn_until: until, chosen_at: null })))
        .onConflict((oc) => oc.column('dataset_id').doNothing())
        .returning('dataset_id')
        .execute();
      for (const t of inserted) taken.set(t.dataset_id, null);
    }
    return taken;
  }

  private async chosen(datasetId: string, now: number): Promise<void> {
    await this.deps.db.updateTable('dataset_hot_key_turns').set({ chosen_at: iso(now) }).where('dataset_id', '=', datasetId).execute();
  }
}
