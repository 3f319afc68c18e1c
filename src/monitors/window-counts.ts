import type { EventStore, LoadedScope } from '../engine/event-store.js';
import { furthest, movedOn, type LoadedPositions } from '../engine/loaded-positions.js';
import type { QueryService } from '../query/query-service.js';
import { maxStatsRows, readsClock, type FieldRef, type SoqlQuery, type StatsAggregate } from '../soql/index.js';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import { groupValues, withinWindow, type GroupValue } from './window-query.js';

/**
 * Windows at least this long are counted from the last evaluation's answer; shorter ones read
 * whole. A counted step costs about three small reads whatever the window; a whole read grows
 * with the window's events, and from about 15 minutes on (at bench:monitors' rate, with a
 * payload text filter) costs more than those three (bench/threshold-statements.ts).
 */
const countedWindowMinMs = 15 * 60_000;
/** Statements whose tallies are kept at once (least recently evaluated dropped first): ≤ 1,000 groups each. */
const maxKept = 5_000;
const dayMs = 86_400_000;

/**
 * Sums of doubles are rounded in every read, and the rounding of the sums added and subtracted
 * would add up over the steps: a window of sums is read whole after this many counted steps
 * (an hour of a monitor every minute). Counts are exact and never need it.
 */
const maxSumSteps = 60;

/** One group of the window: its events, and for `sum`/`avg` the sum of its numbers and how many there were. */
interface Tally {
  key: string;
  group: Record<string, unknown>;
  events: number;
  numbers: number;
  sum: number;
}

interface Kept {
  /** The active datasets the tallies were read over, sorted, joined. */
  datasets: string;
  /** The loaded positions the tallies stand at: they tally exactly the events loaded then. */
  positions: LoadedPositions;
  from: number;
  to: number;
  tallies: Map<string, Tally>;
  /** Counted steps since the last whole read. */
  steps: number;
}

/** The statement's one aggregate, when it is one kept here. */
type KeptAggregate = { fn: 'count' } | { fn: 'sum' | 'avg'; field: FieldRef };

function keptAggregate(query: SoqlQuery): KeptAggregate | undefined {
  const aggregates = query.stats?.aggregates ?? [];
  const a = aggregates[0];
  if (aggregates.length !== 1 || !a) return undefined;
  if (a.fn === 'count') return { fn: 'count' };
  if (a.fn === 'sum' || a.fn === 'avg') return { fn: a.fn, field: a.field };
  return undefined;
}

export interface WindowCountsDeps {
  queries: QueryService;
  store: Pick<EventStore, 'loadedPositions'>;
  /** The shortest retention of the tenant's active datasets, in days (DatasetService.shortestActiveRetentionDays). */
  retentionDays: (tenant: Tenant) => Promise<number | null>;
}

/**
 * `count()`, `sum(f)` and `avg(f)` over a long window, kept from one evaluation to the next
 * (docs/monitors.md, "Long windows counted from the last answer"). A 24 h window read whole at
 * every evaluation re-reads the tenant's day though all but a minute of it was read a minute
 * before; here each group's tally (its events; for sum and avg the sum of its numbers and how
 * many) is kept with the loaded positions it was read at (every log's seq: loaded-positions.ts),
 * and the next evaluation reads three small sets instead, each with the statement's own filter
 * and datasets:
 *
 *   + the events loaded since, with ts in the new window (late events of any age included),
 *   + the events loaded before, with ts past the old window's end,
 *   − the events loaded before, with ts in the part of the old window the new one left.
 *
 * So the counts are those of one statement over the new window that reads exactly the events
 * loaded at the new positions: what a read at that moment answers. Sums are too, but for the
 * rounding of doubles (each read rounds its own sum; a whole read every 60 steps keeps it from
 * adding up). Anything that could change a tallied event makes the next evaluation read whole:
 * other active datasets, a window that moved back or past its old end, more groups than one
 * answer holds, and a retention short enough that the purge may delete events of the old window
 * before they are subtracted (deleted events would be subtracted from tallies that still hold them).
 */
export class WindowCounts {
  private readonly kept = new Map<string, Kept>();
  /** One evaluation at a time per statement: each starts from the tallies the one before left. */
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Reads, for the tests and the bench: whole windows against counted steps. */
  readonly reads = { whole: 0, counted: 0 };

  constructor(private readonly deps: WindowCountsDeps) {}

  /** Whether the monitor's window is counted here (else the caller reads it whole). */
  static counts(query: SoqlQuery, windowMs: number): boolean {
    return windowMs >= countedWindowMinMs && keptAggregate(query) !== undefined && query.stats!.by.every((b) => b.kind === 'field') && !readsClock(query);
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
    const aggregate = keptAggregate(query)!;
    const before = this.kept.get(key);
    this.kept.delete(key);
    const positions = furthest(before?.positions ?? {}, await this.deps.store.loadedPositions());
    const usable =
      before !== undefined &&
      from >= before.from &&
      to >= before.to &&
      from <= before.to &&
      (aggregate.fn === 'count' || before.steps < maxSumSteps) &&
      (await this.retained(tenant, to - before.from));
    let next = usable ? await this.counted(tenant, query, aggregate, before, positions, from, to) : undefined;
    if (!next || next.tallies.size >= maxStatsRows) next = await this.whole(tenant, query, aggregate, positions, from, to);
    const full = next.tallies.size >= maxStatsRows;
    // As many groups as one answer holds may be a cut answer (the top ones by their events): not
    // tallies to go on from; and for sum and avg not the statement's own top ones (by the value).
    if (full && aggregate.fn !== 'count') return groupValues(this.deps.queries, tenant, query, from, to);
    if (!full) {
      this.kept.set(key, next);
      if (this.kept.size > maxKept) this.kept.delete(this.kept.keys().next().value!);
    }
    return [...next.tallies.values()].map((t) => valueOf(aggregate, t));
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

  /** The window read whole, tallying the events loaded at `positions`. */
  private async whole(tenant: Tenant, query: SoqlQuery, aggregate: KeptAggregate, positions: LoadedPositions, from: number, to: number): Promise<Kept> {
    this.reads.whole++;
    const read = await this.read(tenant, query, aggregate, from, to, { upTo: positions });
    return { datasets: read.datasets, positions, from, to, tallies: new Map(read.rows.map((t) => [t.key, t])), steps: 0 };
  }

  /** The new window from the kept one, or undefined when a read says it cannot be (other datasets, a full answer). */
  private async counted(tenant: Tenant, query: SoqlQuery, aggregate: KeptAggregate, before: Kept, positions: LoadedPositions, from: number, to: number): Promise<Kept | undefined> {
    this.reads.counted++;
    const was = before.positions;
    const reads = await Promise.all([
      movedOn(was, positions).length ? this.read(tenant, query, aggregate, from, to, { upTo: positions, after: was }) : undefined,
      to > before.to ? this.read(tenant, query, aggregate, before.to + 1, to, { upTo: was }) : undefined,
      from > before.from ? this.read(tenant, query, aggregate, before.from, from - 1, { upTo: was }) : undefined,
    ]);
    const [added, later, left] = reads;
    // Each read tells the datasets it read over; with none there is nothing to tell a change by.
    if (!added && !later && !left) return undefined;
    for (const read of reads) if (read && (read.datasets !== before.datasets || read.rows.length >= maxStatsRows)) return undefined;
    const tallies = new Map(before.tallies);
    // Without `by` the statement answers one row, 0 (or null) when nothing matches (a monitor
    // reads that, not "no data"); with `by` a group without events has no row.
    const oneRow = query.stats!.by.length === 0;
    const add = (rows: Tally[], sign: 1 | -1) => {
      for (const row of rows) {
        const kept = tallies.get(row.key);
        const events = (kept?.events ?? 0) + sign * row.events;
        const numbers = (kept?.numbers ?? 0) + sign * row.numbers;
        // With no number left the sum is 0 exactly, not what the rounding of the steps left of it.
        const sum = numbers > 0 ? (kept?.sum ?? 0) + sign * row.sum : 0;
        if (events > 0 || oneRow) tallies.set(row.key, { key: row.key, group: row.group, events, numbers, sum });
        else tallies.delete(row.key);
      }
    };
    if (added) add(added.rows, 1);
    if (later) add(later.rows, 1);
    if (left) add(left.rows, -1);
    return { datasets: before.datasets, positions, from, to, tallies, steps: before.steps + 1 };
  }

  /** The statement's tallies over [from, to] among the events `loaded` names: count() alone, or count(), sum and count_numbers of the field. */
  private async read(tenant: Tenant, query: SoqlQuery, aggregate: KeptAggregate, from: number, to: number, loaded: LoadedScope): Promise<{ rows: Tally[]; datasets: string }> {
    let datasets = '';
    const aggregates: StatsAggregate[] =
      aggregate.fn === 'count'
        ? [{ fn: 'count', position: 0 }]
        : [
            { fn: 'count', position: 0 },
            { fn: 'sum', field: aggregate.field, position: 0 },
            { fn: 'count_numbers', field: aggregate.field, position: 0 },
          ];
    const tallyQuery: SoqlQuery = { ...query, filter: withinWindow(query, from, to), stats: { ...query.stats!, aggregates } };
    const result = await this.deps.queries.run(tenant, tallyQuery, undefined, {
      loaded,
      datasets: (ids) => {
        datasets = [...ids].sort().join(',');
      },
    });
    if (result.kind !== 'stats') return { rows: [], datasets };
    const rows = result.stats.map((row): Tally => {
      const [events, sum, numbers] = Object.values(row.values);
      return { key: JSON.stringify(row.by), group: row.by, events: events ?? 0, numbers: numbers ?? 0, sum: sum ?? 0 };
    });
    return { rows, datasets };
  }
}

/** A group's value as the statement answers it: its events, or the sum or average of its numbers (null without any). */
function valueOf(aggregate: KeptAggregate, t: Tally): GroupValue {
  const value = aggregate.fn === 'count' ? t.events : t.numbers === 0 ? null : aggregate.fn === 'sum' ? t.sum : t.sum / t.numbers;
  return { key: t.key, group: t.group, value };
}
