import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { Logger } from '../kernel/logger.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import type { QueryService } from '../query/query-service.js';
import type { NotificationService } from '../notifications/notification-service.js';
import { iso, type Clock } from '../shared/clock.js';
import { durationMs } from './durations.js';
import { nextDueMs, slotKey } from './schedule.js';
import { parseThresholdQuery, type Condition } from './monitor.js';
import { breaches, step, type StepSettings } from './state-machine.js';
import { groupEvents, groupValues, type GroupValue } from './window-query.js';
import { WindowCounts } from './window-counts.js';
import { tenantKey } from '../tenancy/tenant.js';
import { explorerUrl } from './explorer-url.js';
import type { GroupStore } from './group-store.js';
import type { MonitorGroupsTable, MonitorsTable } from './tables.js';

const batch = 50;

/** One write of an evaluation, run in its commit's transaction. */
type Write = (db: Kysely<Database>) => Promise<void>;

/** What an evaluation stores: the monitor row's values (status.last_value) and the other writes (groups that changed, history, notifications). */
interface Evaluation {
  high: number | null;
  low: number | null;
  /** Whether a group's value met the condition (status.last_match_at); a breach for want of data (`no_data: alerting`) is not a match. */
  matched: boolean;
  writes: Write[];
  /** Whether the writes store notifications (the delivery worker is woken after the commit only then). */
  notifies: boolean;
}

/**
 * The window answers of one batch, by statement: monitors of one tenant (organisation, project
 * and mode: tenantKey) with the same `q` and `window`, evaluated at the batch's `now`, run the
 * same statement over the same rows, so the first one's answer serves the others (docs/monitors.md
 * "One statement per batch"). The key holds the tenant: two tenants' monitors never share one.
 */
type SharedAnswers = Map<string, Promise<GroupValue[]>>;

/** Lets the event loop serve what arrived (HTTP requests) before the next evaluation's synchronous steps. */
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Threshold monitors' scheduler: every API process runs one. A due monitor is evaluated by the
 * process whose conditional UPDATE takes its lease (as the notification outbox claims rows);
 * the lease lasts `every`, so a process that dies mid-evaluation hands the monitor on within
 * 2 × every. An evaluation only reads; its writes (group states, history, notifications) commit
 * in one transaction with the move to the next interval, and only while the lease is still this
 * process's (`commit`). After the evaluation the monitor is due at its next slot (schedule.ts):
 * once per interval of `every`, at an offset of its statement's, so 1,000 monitors are not all
 * due at once, and monitors of one statement still share its read.
 *
 * Evaluations share the event loop with the API: each starts after a turn of the loop (what
 * arrived meanwhile is served first), and one that changes no group's state writes one row —
 * the monitor's (docs/monitors.md "Scheduler").
 */
export class Evaluator {
  private readonly owner = `eval_${crypto.randomUUID()}`;
  private running: Promise<number> = Promise.resolve(0);
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly queries: QueryService,
    private readonly notifications: NotificationService,
    private readonly groups: GroupStore,
    private readonly urls: PublicUrls,
    private readonly log: Logger,
    private readonly tickMs: number,
    /** Evaluations at a time (OPS_MONITOR_CONCURRENCY): on ClickHouse one mostly waits for the server. */
    private readonly concurrency = 1,
    /** Long windows' `count()` kept from one evaluation to the next (window-counts.ts); without it every window is read whole. */
    private readonly windowCounts?: WindowCounts,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.evaluateDue(), this.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Evaluates every monitor due now that this process can claim; one run at a time in a process. Answers how many it evaluated. */
  evaluateDue(): Promise<number> {
    this.running = this.running.then(
      () => this.runAllDue(),
      () => this.runAllDue(),
    );
    return this.running;
  }

  /**
   * Batch after batch while each evaluated a full batch: one batch per tick capped a process at
   * `batch` evaluations per tick (600 a minute at 5 s), fewer than 1,000 monitors of `every: 1m`
   * (bench:monitors). A short batch means nothing more is due, or the rest failed or went to
   * another process: the next tick looks again.
   */
  private async runAllDue(): Promise<number> {
    let evaluated = 0;
    for (;;) {
      const n = await this.runDue();
      evaluated += n;
      if (n < batch || this.stopping) return evaluated;
    }
  }

  private async runDue(): Promise<number> {
    let evaluated = 0;
    try {
      const now = this.clock.now();
      const nowText = iso(now);
      const due = await this.db
        .selectFrom('monitors')
        .select(['id', 'every'])
        .where('kind', '=', 'threshold')
        .where('next_eval_at', '<=', nowText)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowText)]))
        .orderBy('next_eval_at')
        .limit(batch)
        .execute();
      // Up to `concurrency` at once, each claimed, evaluated and committed on its own.
      let next = 0;
      const shared: SharedAnswers = new Map();
      const worker = async () => {
        while (next < due.length && !this.stopping) {
          const monitor = due[next++]!;
          await yieldToIo();
          try {
            if (await this.runOne(monitor, now, nowText, shared)) evaluated++;
          } catch (error) {
            // The metadata store failed the claim or the release: the lease runs out and it is evaluated again.
            this.log.warn({ err: error, monitor_id: monitor.id }, 'monitors: a due monitor could not be claimed or released; it is tried again when its lease runs out');
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.concurrency, due.length) }, worker));
    } catch (error) {
      this.log.warn({ err: error }, 'monitors: the scheduler could not read due monitors; it tries again at the next tick');
    }
    return evaluated;
  }

  /** Claims, evaluates and commits one due monitor; whether an evaluation was stored. */
  private async runOne({ id, every }: { id: string; every: string | null }, now: number, nowText: string, shared: SharedAnswers): Promise<boolean> {
    const leaseUntil = iso(now + (durationMs(every ?? '1m') ?? 60_000));
    // The claim answers the row it claimed (one statement, not an UPDATE and a SELECT).
    const row = await this.db
      .updateTable('monitors')
      .set({ lease_until: leaseUntil, lease_owner: this.owner })
      .where('id', '=', id)
      .where('next_eval_at', '<=', nowText)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowText)]))
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    try {
      await yieldToIo();
      const evaluation = await this.evaluate(row, now, shared);
      await yieldToIo();
      if (await this.commit(row, now, evaluation)) {
        if (evaluation.notifies) this.notifications.wake();
        return true;
      }
      if (await this.freeLease(row)) {
        this.log.info({ monitor_id: id }, 'monitors: the monitor changed during the evaluation; this evaluation is dropped and the new definition evaluated at the next tick');
      } else {
        this.log.warn({ monitor_id: id }, 'monitors: the lease ran out during the evaluation and another process has the monitor; this evaluation is dropped');
      }
    } catch (error) {
      this.log.warn({ err: error, monitor_id: id }, 'monitors: an evaluation failed; it runs again at the next interval');
      await this.release(row, now);
    }
    return false;
  }

  /**
   * Stores an evaluation's writes — group states, state changes, notifications — in one
   * transaction that first moves the monitor to its next interval and frees the lease, only
   * while this process still holds it and the monitor is as it was read. So an evaluation is
   * committed whole or not at all (a kill -9 in the middle leaves nothing: the next holder
   * evaluates again), an evaluation that outlived its lease while another process took the
   * monitor commits nothing (on PostgreSQL the UPDATE's row lock orders it against that
   * process's claim), and neither does one of a monitor deleted or changed (PATCH) meanwhile.
   * False when nothing was stored. An evaluation that changed no group (the usual one) is that
   * fenced UPDATE alone, which is atomic without a transaction.
   */
  private async commit(row: MonitorsTable, now: number, evaluation: Evaluation): Promise<boolean> {
    if (!evaluation.writes.length) return this.advance(this.db, row, now, evaluation);
    return this.db.transaction().execute(async (trx) => {
      if (!(await this.advance(trx, row, now, evaluation))) return false;
      for (const write of evaluation.writes) await write(trx);
      return true;
    });
  }

  /**
   * Moves the monitor to its next slot (schedule.ts: an offset inside `every` of its statement's,
   * so that monitors do not all fall due together) and frees the lease, only if the lease is still ours
   * and the monitor unchanged since it was read (the fence of commit and release); whether it did.
   * With an evaluation, also when it was evaluated, its values and, when a group's value met the
   * condition, that it matched now (the Monitor's status): no write of its own.
   */
  private async advance(db: Kysely<Database>, row: MonitorsTable, now: number, evaluated?: Evaluation): Promise<boolean> {
    const stored = evaluated ? { last_eval_at: iso(now), last_high: evaluated.high, last_low: evaluated.low, ...(evaluated.matched ? { last_match_at: iso(now) } : {}) } : {};
    const moved = await db
      .updateTable('monitors')
      .set({ next_eval_at: iso(nextDueMs(slotKey(row), durationMs(row.every!) ?? 60_000, now)), lease_until: null, lease_owner: null, ...stored })
      .where('id', '=', row.id)
      .where('lease_owner', '=', this.owner)
      .where('updated_at', '=', row.updated_at)
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  }

  /**
   * After a failed evaluation: due again at the next interval, the lease freed (only if still
   * ours; a monitor changed meanwhile keeps the due time its change gave it).
   */
  private async release(row: MonitorsTable, now: number): Promise<void> {
    if (!(await this.advance(this.db, row, now))) await this.freeLease(row);
  }

  /** Frees the lease if it is still ours, leaving the due time as it is; whether it was ours. */
  private async freeLease(row: MonitorsTable): Promise<boolean> {
    const freed = await this.db.updateTable('monitors').set({ lease_until: null, lease_owner: null }).where('id', '=', row.id).where('lease_owner', '=', this.owner).executeTakeFirst();
    return Number(freed.numUpdatedRows) === 1;
  }

  /**
   * The window's values of `q` for the tenant, read once per batch for every monitor with the
   * same tenant, `q` and window (`from`; `now` is the batch's). Reading it again for each would
   * run the same statement over the same rows: the answers differ only by events that arrived in
   * between, which an evaluation a few milliseconds later might see or not anyway. A failed read
   * fails every evaluation that shares it, as it would have failed each of them.
   */
  private windowValues(shared: SharedAnswers, tenant: Tenant, q: string, query: ReturnType<typeof parseThresholdQuery>, from: number, now: number): Promise<GroupValue[]> {
    const key = JSON.stringify([tenantKey(tenant), q, from, now]);
    let answer = shared.get(key);
    if (!answer) {
      answer = this.windowCounts && WindowCounts.counts(query, now - from) ? this.windowCounts.values(tenant, q, query, from, now) : groupValues(this.queries, tenant, query, from, now);
      shared.set(key, answer);
      // Each sharer awaits it; this keeps an unshared failure from being reported as unhandled.
      answer.catch(() => undefined);
    }
    return answer;
  }

  /**
   * One evaluation of a threshold monitor at `now`: every group's state machine steps once. It
   * only reads; what it would store is answered for `commit`: the values, and writes for the
   * groups whose row changes (a group that appears, changes state, `since` or `notified_at`, or
   * is forgotten), the state changes and the notifications. A group whose step leaves it as it
   * was keeps its row unwritten: the next step reads the same state from it.
   */
  private async evaluate(row: MonitorsTable, now: number, shared: SharedAnswers): Promise<Evaluation> {
    const writes: Write[] = [];
    let notifies = false;
    let high: number | null = null;
    let low: number | null = null;
    let matched = false;
    const tenant: Tenant = { orgId: row.org_id, projectId: row.project_id, mode: row.mode };
    const query = parseThresholdQuery(row.q);
    const from = now - durationMs(row.window!)!;
    const values = await this.windowValues(shared, tenant, row.q, query, from, now);
    // The answer arrives from the events engine in a task of its own; the group states read after a turn of the loop.
    await yieldToIo();
    const known = new Map((await this.groups.groups(tenant, row.id)).map((g) => [g.group_key, g]));
    const current = new Map(values.map((v) => [v.key, v]));
    // Without `by` the monitor is one group, which has no data when the stats answer no row.
    if (!query.stats!.by.length && !current.has('{}')) current.set('{}', { key: '{}', group: {}, value: null });
    const condition: Condition = { op: row.condition_op as Condition['op'], value: row.condition_value! };
    const settings: StepSettings = {
      condition,
      forMs: durationMs(row.for!)!,
      repeatMs: durationMs(row.repeat!)!,
      noData: row.no_data!,
      muted: row.muted_until !== null && Date.parse(row.muted_until) > now,
      notifyOnResolve: row.notify_on_resolve === 1,
    };
    for (const key of new Set([...known.keys(), ...current.keys()])) {
      const before = known.get(key);
      const value = current.get(key)?.value ?? null;
      const group = current.get(key)?.group ?? (JSON.parse(key) as Record<string, unknown>);
      const prev = before ? { state: before.state, since: Date.parse(before.since), notifiedAt: before.notified_at ? Date.parse(before.notified_at) : null } : { state: 'ok' as const, since: now, notifiedAt: null };
      if (value !== null) {
        high = high === null || value > high ? value : high;
        low = low === null || value < low ? value : low;
        matched ||= breaches(value, condition, 'ok');
      }
      const next = step(prev, value, now, settings);
      if (next.state !== prev.state) writes.push((db) => this.groups.recordChange(tenant, row.id, key, prev.state, next.state, value, now, db));
      const saved: MonitorGroupsTable = { monitor_id: row.id, group_key: key, org_id: row.org_id, project_id: row.project_id, mode: row.mode, state: next.state, since: iso(next.since), last_value: value, notified_at: next.notifiedAt === null ? null : iso(next.notifiedAt), updated_at: iso(now) };
      const forget = next.state === 'ok' && value === null;
      const unchanged = before !== undefined && !forget && before.state === saved.state && before.since === saved.since && before.notified_at === saved.notified_at;
      if (forget ? before !== undefined : !unchanged) writes.push((db) => this.groups.save(tenant, saved, before !== undefined, forget, db));
      if (!next.notify) continue;
      const events = next.notify === 'firing' ? await groupEvents(this.queries, tenant, query, group, from, now).catch(() => []) : [];
      const isCount = query.stats!.aggregates[0]!.fn === 'count';
      const prepared = await this.notifications.prepare(tenant, {
        channelIds: JSON.parse(row.channel_ids) as string[],
        monitor: { id: row.id, name: row.name, kind: row.kind },
        status: next.notify,
        group,
        value,
        condition,
        window: { from: iso(from), to: iso(now) },
        started_at: iso(next.notify === 'firing' ? next.since : prev.since),
        resolved_at: next.notify === 'resolved' ? iso(now) : null,
        events_total: isCount && value !== null ? value : events.length,
        events,
        url: explorerUrl(this.urls.api, query, from, now),
      });
      writes.push((db) => this.notifications.store(prepared, db));
      notifies = true;
    }
    // When it was evaluated and its values (the Monitor's status) go with the move to the next interval (advance).
    return { high, low, matched, writes, notifies };
  }
}
