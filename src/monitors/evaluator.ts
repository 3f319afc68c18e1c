import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { Logger } from '../app/logger.js';
import type { PublicUrls } from '../app/public-urls.js';
import type { QueryService } from '../query/query-service.js';
import type { NotificationService } from '../notifications/notification-service.js';
import { iso, type Clock } from '../shared/clock.js';
import { durationMs } from './durations.js';
import { parseThresholdQuery, type Condition } from './monitor.js';
import { step, type StepSettings } from './state-machine.js';
import { groupEvents, groupValues } from './window-query.js';
import { explorerUrl } from './explorer-url.js';
import type { GroupStore } from './group-store.js';
import type { MonitorsTable } from './tables.js';

const batch = 50;

/**
 * Threshold monitors' scheduler: every API process runs one. A due monitor is evaluated by the
 * process whose conditional UPDATE takes its lease (as the notification outbox claims rows);
 * the lease lasts `every`, so a process that dies mid-evaluation hands the monitor on within
 * 2 × every. After the evaluation the monitor is due again `every` later.
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
      for (const { id, every } of due) {
        const leaseUntil = iso(now + (durationMs(every ?? '1m') ?? 60_000));
        const claimed = await this.db
          .updateTable('monitors')
          .set({ lease_until: leaseUntil, lease_owner: this.owner })
          .where('id', '=', id)
          .where('next_eval_at', '<=', nowText)
          .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowText)]))
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) !== 1) continue;
        const row = await this.db.selectFrom('monitors').selectAll().where('id', '=', id).where('lease_owner', '=', this.owner).executeTakeFirst();
        if (!row) continue;
        try {
          await this.evaluate(row, now);
          evaluated++;
        } catch (error) {
          this.log.warn({ err: error, monitor_id: id }, 'monitors: an evaluation failed; it runs again at the next interval');
        }
        await this.db
          .updateTable('monitors')
          .set({ next_eval_at: iso(now + (durationMs(row.every!) ?? 60_000)), lease_until: null, lease_owner: null })
          .where('id', '=', id)
          .where('lease_owner', '=', this.owner)
          .execute();
      }
    } catch (error) {
      this.log.warn({ err: error }, 'monitors: the scheduler could not read due monitors; it tries again at the next tick');
    }
    return evaluated;
  }

  /** One evaluation of a threshold monitor at `now`: every group's state machine steps once. */
  private async evaluate(row: MonitorsTable, now: number): Promise<void> {
    const tenant: Tenant = { orgId: row.org_id, projectId: row.project_id, mode: row.mode };
    const query = parseThresholdQuery(row.q);
    const from = now - durationMs(row.window!)!;
    const values = await groupValues(this.queries, tenant, query, from, now);
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
      const next = step(prev, value, now, settings);
      if (next.state !== prev.state) await this.groups.recordChange(tenant, row.id, key, prev.state, next.state, value, now);
      await this.groups.save(
        tenant,
        { monitor_id: row.id, group_key: key, org_id: row.org_id, project_id: row.project_id, mode: row.mode, state: next.state, since: iso(next.since), last_value: value, notified_at: next.notifiedAt === null ? null : iso(next.notifiedAt), updated_at: iso(now) },
        before !== undefined,
        next.state === 'ok' && value === null,
      );
      if (!next.notify) continue;
      const events = next.notify === 'firing' ? await groupEvents(this.queries, tenant, query, group, from, now).catch(() => []) : [];
      const isCount = query.stats!.aggregates[0]!.fn === 'count';
      await this.notifications.enqueue(tenant, {
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
    }
  }
}
