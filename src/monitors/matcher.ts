import type { Kysely } from 'kysely';
import type { Logger } from '../kernel/logger.js';
import type { Database } from '../stores/metadata/schema.js';
import type { Clock } from '../shared/clock.js';
import { iso } from '../shared/clock.js';
import type { NewEvent } from '../engine/event-store.js';
import { parsedPayload, type StoredEvent } from '../shared/event-record.js';
import { compilePredicate, type EventPredicate, type SoqlQuery } from '../soql/index.js';
import { apiEventJson } from '../query/event-shape.js';
import type { NotificationService } from '../notifications/notification-service.js';
import { maxNotifiedEvents } from '../notifications/notification.js';
import { tenantKey, type Tenant } from '../tenancy/tenant.js';
import { durationMs } from './durations.js';
import { explorerUrl } from './explorer-url.js';
import { defaults, parseMatchQuery } from './monitor.js';
import type { MonitorsTable } from './tables.js';
import { forEachCandidate, guardIndex, matchGuard, severityLevels, type GuardIndex, type MatchGuard } from './match-guard.js';
import { payloadParsedFor } from '../soql/index.js';

/**
 * Match monitors on the write path (DECISIONS.md §18 `kind: "match"`, docs/monitors.md). Every
 * append acknowledged by this process is handed over synchronously (`matchAppended`): the
 * tenant's active, unmuted match monitors, compiled once into live tail's in-memory predicate,
 * are tested against the new events in memory. A monitor's first match is notified at once and
 * opens its `group_window`; matches within it are counted (the first 10 events kept) and sent
 * together when it ends, which opens the next window; a window without matches closes.
 *
 * Nothing here blocks the ingest answer: matching is synchronous and in memory, loading a
 * tenant's monitors and enqueueing notifications are asynchronous, their errors logged.
 *
 * Each notification is stored in one transaction with the monitor's `last_match_at` (its latest
 * match's time), so the status every process reads never shows a match that was not notified,
 * and matching writes nothing per event: one row per notification, at most two a `group_window`.
 */

/** How long a tenant's compiled monitors are trusted before they are read again (another process may have changed them). */
export const matchCacheTtlMs = 5_000;
/** Events kept per monitor for the next grouped notification; later matches are only counted. */
const maxPendingEvents = maxNotifiedEvents;

interface CompiledMonitor {
  row: MonitorsTable;
  query: SoqlQuery;
  predicate: EventPredicate;
  /** An equality or a contains the monitor's events must meet, tested for all monitors at once per event instead of running every predicate (match-guard.ts). */
  guard: MatchGuard | undefined;
  /** Without a guard: the severities its events can have, when a top-level item rules some out (match-guard.ts). */
  levels: boolean[] | undefined;
  groupMs: number;
  channelIds: string[];
}

interface TenantMonitors {
  loadedAt: number;
  monitors: CompiledMonitor[];
  /** The tenant's active datasets, id → name (the predicate matches on names). */
  datasets: Map<string, string>;
  /** The guard index of all the monitors, made at the first batch where none is muted. */
  index?: GuardIndex<CompiledMonitor>;
}

/** An open group window of one monitor. */
interface Window {
  tenant: Tenant;
  monitor: CompiledMonitor;
  openedAt: number;
  count: number;
  /** When its latest match arrived (the matched events' ingested_at). */
  lastMatchAt: number;
  events: StoredEvent[];
  timer: NodeJS.Timeout;
}

export interface MatcherDeps {
  clock: Clock;
  notifications: Pick<NotificationService, 'prepare' | 'store' | 'wake'>;
  /** The metadata store: a notification and the monitor's last_match_at are written in one transaction of it. */
  db: Kysely<Database>;
  /** Stores the monitor's last_match_at (only ever moved forward) in `db`. */
  recordMatch: (tenant: Tenant, monitorId: string, at: number, db: Kysely<Database>) => Promise<void>;
  /** The tenant's match monitors (all of them; muted ones are skipped here). */
  load: (tenant: Tenant) => Promise<MonitorsTable[]>;
  /** The tenant's active datasets. */
  datasets: (tenant: Tenant) => Promise<ReadonlyArray<{ id: string; name: string }>>;
  apiUrl: () => string;
  log: Logger;
  /** Monotonic milliseconds for the cache's age (tests move the clock; the TTL is real time). */
  monotonic?: () => number;
}

export class MatchEvaluator {
  private readonly cache = new Map<string, TenantMonitors>();
  private readonly loading = new Map<string, Promise<TenantMonitors>>();
  /** Bumped on every change, so a load that started before it does not fill the cache. */
  private readonly generation = new Map<string, number>();
  private readonly windows = new Map<string, Window>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;
  private readonly monotonic: () => number;

  constructor(private readonly deps: MatcherDeps) {
    this.monotonic = deps.monotonic ?? (() => performance.now());
  }

  /** The tenant's monitors changed in this process: read them again at the next append. */
  forget(tenant: Tenant): void {
    const key = tenantKey(tenant);
    this.cache.delete(key);
    this.loading.delete(key);
    this.generation.set(key, (this.generation.get(key) ?? 0) + 1);
  }

  /** The write path's hook, after a durable append: synchronous and cheap; never throws. */
  matchAppended(tenant: Tenant, events: readonly NewEvent[]): void {
    if (this.stopped || events.length === 0) return;
    try {
      const cached = this.cache.get(tenantKey(tenant));
      if (cached && this.monotonic() - cached.loadedAt < matchCacheTtlMs && (cached.monitors.length === 0 || events.every((e) => cached.datasets.has(e.datasetId)))) {
        this.match(tenant, cached, events);
        return;
      }
      // Cold, stale or a dataset created since: read first, then match the same events.
      this.track(this.loadTenant(tenant).then((fresh) => this.match(tenant, fresh, events)));
    } catch (error) {
      this.deps.log.warn({ err: error }, 'monitors: matching appended events failed');
    }
  }

  /** Shutdown: open windows with matches are sent now, and pending enqueues awaited. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const key of [...this.windows.keys()]) this.flush(key, false);
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private loadTenant(tenant: Tenant): Promise<TenantMonitors> {
    const key = tenantKey(tenant);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const generation = this.generation.get(key) ?? 0;
    const load = (async () => {
      const rows = await this.deps.load(tenant);
      const now = this.deps.clock.now();
      const monitors = rows.flatMap((row): CompiledMonitor[] => {
        try {
          const query = parseMatchQuery(row.q);
          return [{ row, query, predicate: compilePredicate(query, { now }), guard: matchGuard(query), levels: severityLevels(query), groupMs: durationMs(row.group_window ?? defaults.group_window) ?? 60_000, channelIds: JSON.parse(row.channel_ids) as string[] }];
        } catch (error) {
          this.deps.log.warn({ err: error, monitor_id: row.id }, 'monitors: a match monitor could not be compiled; it is skipped');
          return [];
        }
      });
      const datasets = new Map(monitors.length ? (await this.deps.datasets(tenant)).map((d) => [d.id, d.name] as const) : []);
      const entry: TenantMonitors = { loadedAt: this.monotonic(), monitors, datasets };
      if ((this.generation.get(key) ?? 0) === generation) this.cache.set(key, entry);
      return entry;
    })();
    this.loading.set(key, load);
    const clear = () => {
      if (this.loading.get(key) === load) this.loading.delete(key);
    };
    load.then(clear, clear);
    return load;
  }

  private match(tenant: Tenant, entry: TenantMonitors, events: readonly NewEvent[]): void {
    if (this.stopped || entry.monitors.length === 0) return;
    const now = this.deps.clock.now();
    const live = entry.monitors.filter((m) => m.row.muted_until === null || Date.parse(m.row.muted_until) <= now);
    if (!live.length) return;
    // The guards read the events as ingest made them; the predicate's view of an event (its
    // payload parsed at most once, whatever the number of monitors: a guard's parse is handed
    // on) is made only when some
    // monitor's guard lets the event through. Events of a dataset not active (or unknown) are not
    // matched, as live tail does not send them. A guarded monitor's predicate runs only on the
    // events its guard passes; the others' on every event. Hits keep the events' order.
    const index = live.length === entry.monitors.length ? (entry.index ??= guardIndex(live)) : guardIndex(live);
    const hits = new Map<CompiledMonitor, StoredEvent[]>();
    let dataset = '';
    let stored: StoredEvent | undefined;
    const visit = (monitor: CompiledMonitor, e: NewEvent) => {
      stored ??= { seq: 0, event_id: e.eventId, ts: e.ts, ingested_at: now, dataset, severity: e.severity, event: e.event, actor: e.actor, source: e.source, message: e.message, payloadJson: e.payload, bytes_raw: e.bytesRaw, [parsedPayload]: e[parsedPayload] ?? payloadParsedFor(e) };
      if (!monitor.predicate(stored)) return;
      const list = hits.get(monitor);
      if (list) list.push(stored);
      else hits.set(monitor, [stored]);
    };
    for (const e of events) {
      const name = entry.datasets.get(e.datasetId);
      if (name === undefined) continue;
      dataset = name;
      stored = undefined;
      forEachCandidate(index, e, visit);
    }
    for (const monitor of live) {
      const found = hits.get(monitor);
      if (found) this.matched(tenant, monitor, found, now);
    }
  }

  private matched(tenant: Tenant, monitor: CompiledMonitor, hits: StoredEvent[], now: number): void {
    const open = this.windows.get(monitor.row.id);
    if (open) {
      open.monitor = monitor;
      open.count += hits.length;
      open.lastMatchAt = Math.max(open.lastMatchAt, now);
      for (const hit of hits) {
        if (open.events.length >= maxPendingEvents) break;
        open.events.push(hit);
      }
      return;
    }
    // The first match: notified at once, and the window opens.
    this.notify(tenant, monitor, hits, hits.length, now, now, now);
    this.open(tenant, monitor, now);
  }

  private open(tenant: Tenant, monitor: CompiledMonitor, now: number): void {
    const id = monitor.row.id;
    const timer = setTimeout(() => this.flush(id, true), monitor.groupMs);
    timer.unref();
    this.windows.set(id, { tenant, monitor, openedAt: now, count: 0, lastMatchAt: now, events: [], timer });
  }

  /** The window ends: its matches go out together, and (when there were some) the next window opens. */
  private flush(id: string, reopen: boolean): void {
    const window = this.windows.get(id);
    if (!window) return;
    clearTimeout(window.timer);
    this.windows.delete(id);
    if (window.count === 0) return;
    const now = this.deps.clock.now();
    this.notify(window.tenant, window.monitor, window.events, window.count, window.openedAt, window.lastMatchAt, now);
    if (reopen && !this.stopped) this.open(window.tenant, window.monitor, now);
  }

  /**
   * Stores the notification of `total` matches, the latest at `lastMatchAt`, with the monitor's
   * last_match_at in one transaction (a monitor without channels stores the time alone).
   */
  private notify(tenant: Tenant, monitor: CompiledMonitor, events: StoredEvent[], total: number, startedAt: number, lastMatchAt: number, now: number): void {
    const sent = events.slice(0, maxNotifiedEvents);
    const from = Math.min(startedAt, ...sent.map((e) => e.ts));
    const to = Math.max(now, ...sent.map((e) => e.ts + 1));
    const { row } = monitor;
    const { notifications, db, recordMatch } = this.deps;
    const store = async () => {
      const prepared = await notifications.prepare(tenant, {
        channelIds: monitor.channelIds,
        monitor: { id: row.id, name: row.name, kind: row.kind },
        status: 'firing',
        group: {},
        value: total,
        condition: null,
        window: { from: iso(from), to: iso(to) },
        started_at: iso(startedAt),
        resolved_at: null,
        events_total: total,
        events: sent.map((e) => JSON.parse(apiEventJson(e, tenant)) as Record<string, unknown>),
        url: explorerUrl(this.deps.apiUrl(), monitor.query, from, to),
      });
      if (!prepared.rows.length) return recordMatch(tenant, row.id, lastMatchAt, db);
      await db.transaction().execute(async (trx) => {
        await recordMatch(tenant, row.id, lastMatchAt, trx);
        await notifications.store(prepared, trx);
      });
      notifications.wake();
    };
    this.track(store());
  }

  /** Runs the work in the background: its failure is logged, and stop() waits for it. */
  private track(work: Promise<unknown>): void {
    const tracked: Promise<unknown> = work
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'monitors: a match notification could not be stored'))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }
}
