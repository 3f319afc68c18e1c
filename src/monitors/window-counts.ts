import type { EventStore } from '../engine/event-store.js';
import { furthest, loadedAt, loadedBetween, movedOn, type LoadedPositions } from '../engine/loaded-positions.js';
import type { QueryService, RunScope } from '../query/query-service.js';
import { readsClock, type SoqlQuery } from '../query/soql/index.js';
import { maxStatsRows } from '../query/soql/stats.js';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import { statsGroupValues, withinWindow, type GroupValue } from './window-query.js';

/** Windows at least this long are counted from the last evaluation's answer; shorter ones read whole (cheap). */
export const countedWindowMinMs = 3_600_000;
/** Statements whose counts are kept at once (least recently evaluated dropped first): ≤ 1,000 groups each. */
const maxKept = 5_000;
const dayMs = 86_400_000;

interface Kept {
  /** The active datasets the counts were read over, sorted, joined. */
  datasets: string;
  /** The loaded positions the counts stand at: they count exactly the events loaded then. */
  positions: LoadedPositions;
  from: number;
  to: number;
  counts: Map<string, GroupValue>;
}

export interface WindowCountsDeps {
  queries: QueryService;
  store: Pick<EventStore, 'loadedPositions'>;
  /** The shortest retention of the tenant's active datasets, in days (DatasetService.shortestActiveRetentionDays). */
  retentionDays: (tenant: Tenant) => Promise<number | null>;
}

/**
 * `count()` over a long window, kept from one evaluation to the next (docs/monitors.md, "Long
 * windows counted from the last answer"). A 24 h window read whole at every evaluation re-reads
 * the tenant's day though all but a minute of it was read a minute before; here the answer is
 * kept with the loaded positions it was read at (every log's seq: loaded-positions.ts), and the
 * next evaluation reads three small sets instead, each with the statement's own filter and
 * datasets:
 *
 *   + the events loaded since, with ts in the new window (late events of any age included),
 *   + the events loaded before, with ts past the old window's end,
 *   − the events loaded before, with ts in the part of the old window the new one left.
 *
 * So the counts are those of one statement over the new window that reads exactly the events
 * loaded at the new positions: what a read at that moment answers. Only `count()` is kept (sums
 * of floating-point values would not come out identical to the statement's); anything that
 * could change a counted event makes the next evaluation read whole: other active datasets,
 * a window that moved back or past its old end, more groups than one answer holds, and a
 * retention short enough that the purge may delete events of the old window before they are
 * subtracted (deleted events would be subtracted from counts that still hold them).
 */
export class WindowCounts {
  private readonly kept = new Map<string, Kept>();
  /** One evaluation at a time per statement: each starts from the counts the one before left. */
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Reads, for the tests and the bench: whole windows against counted steps. */
  readonly reads = { whole: 0, counted: 0 };

  constructor(private readonly deps: WindowCountsDeps) {}

  /** Whether the monitor's window is counted here (else the caller reads it whole). */
  static counts(query: SoqlQuery, windowMs: number): boolean {
    return windowMs >= countedWindowMinMs && query.stats?.aggregates.length === 1 && query.stats.aggregates[0]!.fn === 'count' && query.stats.by.every((b) => b.kind === 'field') && !readsClock(query);
  }

  /** The window's values of `q` at `to`: `from` = `to` − the window. */
  values(tenant: Tenant, q: string, query: SoqlQuery, from: number, to: number): Promise<GroupValue[]> {
    const key = JSON.stringify([tenantKey(tenant), q, to - from]);
    const run = (this.chains.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => this.step(key, tenant, query, from, to));
    this.chains.set(key, run);
    void run.finally(() => {
      if (this.chains.get(key) === run) this.chains.delete(key);
    }).catch(() => undefined);
    return run;
  }

  private async step(key: string, tenant: Tenant, query: SoqlQuery, from: number, to: number): Promise<GroupValue[]> {
    const before = this.kept.get(key);
    this.kept.delete(key);
    const positions = furthest(before?.positions ?? {}, await this.deps.store.loadedPositions());
    const usable = before !== undefined && from >= before.from && to >= before.to && from <= before.to && (await this.retained(tenant, to - before.from));
    let next = usable ? await this.counted(tenant, query, before, positions, from, to) : undefined;
    if (!next || next.counts.size >= maxStatsRows) next = await this.whole(tenant, query, positions, from, to);
    // As many groups as one answer holds may be a cut answer (the top ones by count): not counts to go on from.
    if (next.counts.size < maxStatsRows) {
      this.kept.set(key, next);
      if (this.kept.size > maxKept) this.kept.delete(this.kept.keys().next().value!);
    }
    return [...next.counts.values()];
  }

  /**
   * Whether the purge leaves every counted event alone for `spanMs` back from now: it deletes
   * events older than the retention, and the oldest event subtracted here was in the window at the
   * last evaluation, so the retention must cover the window and the time since (and a minute of clock).
   */
  private async retained(tenant: Tenant, spanMs: number): Promise<boolean> {
    const retention = await this.deps.retentionDays(tenant);
    return retention !== null && retention * dayMs >= spanMs + 60_000;
  }

  /** The window read whole, counting the events loaded at `positions`. */
  private async whole(tenant: Tenant, query: SoqlQuery, positions: LoadedPositions, from: number, to: number): Promise<Kept> {
    this.reads.whole++;
    const read = await this.read(tenant, query, from, to, (dialect) => loadedAt(positions, dialect));
    return { datasets: read.datasets, positions, from, to, counts: new Map(read.rows.map((v) => [v.key, v])) };
  }

  /** The new window from the kept one, or undefined when a read says it cannot be (other datasets, a full answer). */
  private async counted(tenant: Tenant, query: SoqlQuery, before: Kept, positions: LoadedPositions, from: number, to: number): Promise<Kept | undefined> {
    this.reads.counted++;
    const was = before.positions;
    const reads = await Promise.all([
      movedOn(was, positions).length ? this.read(tenant, query, from, to, (dialect) => loadedBetween(was, positions, dialect)!) : undefined,
      to > before.to ? this.read(tenant, query, before.to + 1, to, (dialect) => loadedAt(was, dialect)) : undefined,
      from > before.from ? this.read(tenant, query, before.from, from - 1, (dialect) => loadedAt(was, dialect)) : undefined,
    ]);
    const [added, later, left] = reads;
    // Each read tells the datasets it read over; with none there is nothing to tell a change by.
    if (!added && !later && !left) return undefined;
    for (const read of reads) if (read && (read.datasets !== before.datasets || read.rows.length >= maxStatsRows)) return undefined;
    const counts = new Map(before.counts);
    // Without `by` the statement answers one row, 0 when nothing matches (a monitor reads that
    // 0, not "no data"); with `by` a group that counts nothing has no row.
    const oneRow = query.stats!.by.length === 0;
    const add = (rows: GroupValue[], sign: 1 | -1) => {
      for (const row of rows) {
        const value = (counts.get(row.key)?.value ?? 0) + sign * (row.value ?? 0);
        if (value > 0 || oneRow) counts.set(row.key, { ...row, value });
        else counts.delete(row.key);
      }
    };
    if (added) add(added.rows, 1);
    if (later) add(later.rows, 1);
    if (left) add(left.rows, -1);
    return { datasets: before.datasets, positions, from, to, counts };
  }

  private async read(tenant: Tenant, query: SoqlQuery, from: number, to: number, where: RunScope['where']): Promise<{ rows: GroupValue[]; datasets: string }> {
    let datasets = '';
    const result = await this.deps.queries.run(tenant, { ...query, filter: withinWindow(query, from, to) }, undefined, {
      where,
      datasets: (ids) => {
        datasets = [...ids].sort().join(',');
      },
    });
    return { rows: statsGroupValues(result), datasets };
  }
}
