import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { Clock } from '../shared/clock.js';
import { iso } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { FilesRepo } from '../media/files-repo.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import type { PageRequest } from '../pagination/page.js';
import { conflict } from '../errors/app-error.js';
import type { ChannelService } from './channel-service.js';
import type { Outbox } from './outbox.js';
import { retryWindowMs } from './retry-policy.js';
import { withEvidence } from './evidence.js';
import { maxNotifiedEvents, type NotificationFacts, type NotifiedEvent } from './notification.js';
import type { DeliveryState, NotificationAttemptsTable, NotificationsTable } from './tables.js';

/** What a monitor hands over: the facts of §18's body and the channels to tell. */
export interface EnqueueInput extends Omit<NotificationFacts, 'events'> {
  channelIds: readonly string[];
  /** Events as the query API returns them; the first 10 are sent, with their evidence. */
  events: ReadonlyArray<Record<string, unknown>>;
}

/** Outbox rows built by `prepare`, not stored yet. */
export interface PreparedNotification {
  readonly rows: readonly NotificationsTable[];
}

/** The delivery ids of prepared (and stored) notifications. */
export const deliveriesOf = (prepared: PreparedNotification): EnqueuedDelivery[] => prepared.rows.map((r) => ({ channel_id: r.channel_id, delivery_id: r.id }));

/** One stored notification: the delivery id its every attempt carries. */
export interface EnqueuedDelivery {
  channel_id: string;
  delivery_id: string;
}

export interface AttemptView {
  attempted_at: string;
  /** HTTP status, or null when there was none (timeout, connection error, address refused). */
  status: number | null;
  latency_ms: number;
  error: string | null;
}

export interface DeliveryView {
  id: string;
  channel_id: string;
  monitor_id: string;
  status: NotificationsTable['status'];
  state: DeliveryState;
  attempt_count: number;
  /** When the next attempt is due; null once delivered or failed. */
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
  attempts: AttemptView[];
}

const attemptView = (a: NotificationAttemptsTable): AttemptView => ({ attempted_at: a.attempted_at, status: a.status_code, latency_ms: a.latency_ms, error: a.error });

/**
 * The one entry point monitors call: `enqueue(tenant, input)` stores one outbox row per channel
 * (evidence resolved once, for all) before anything is sent, wakes this process's worker, and
 * answers the delivery ids. Also the deliveries' listing, by channel or by monitor.
 */
export class NotificationService {
  /** Set by the capability: this process's worker looks at the outbox at once. */
  onEnqueued: () => void = () => {};

  constructor(
    private readonly clock: Clock,
    private readonly channels: ChannelService,
    private readonly outbox: Outbox,
    private readonly files: FilesRepo,
    private readonly urls: PublicUrls,
  ) {}

  /**
   * Stores the notification for each of the tenant's channels among `channelIds` (an unknown,
   * foreign or deleted channel is skipped: it is not in the answer). A disabled channel's row is
   * stored too and marked failed by the worker, so the history says why nothing was sent.
   */
  async enqueue(tenant: Tenant, input: EnqueueInput): Promise<EnqueuedDelivery[]> {
    const prepared = await this.prepare(tenant, input);
    await this.store(prepared);
    this.onEnqueued();
    return deliveriesOf(prepared);
  }

  /**
   * `enqueue` in two steps, for a caller whose notifications must commit with its own writes
   * (a threshold evaluation: group states and notifications together, or neither): `prepare`
   * reads the channels and the evidence and builds the outbox rows, outside any transaction;
   * `store(prepared, trx)` inserts them in the caller's transaction; after the commit `wake()`
   * tells this process's worker.
   */
  async prepare(tenant: Tenant, input: EnqueueInput): Promise<PreparedNotification> {
    const { channelIds, events, ...rest } = input;
    const channels = await this.channels.some(tenant, [...new Set(channelIds)]);
    if (!channels.length) return { rows: [] };
    const facts: NotificationFacts = {
      ...rest,
      events: await withEvidence(this.files, tenant, this.urls.cdn, events.slice(0, maxNotifiedEvents) as NotifiedEvent[]),
    };
    const now = this.clock.now();
    const text = JSON.stringify(facts);
    const rows: NotificationsTable[] = channels.map((channel) => ({
      id: newId.delivery(),
      org_id: tenant.orgId,
      project_id: tenant.projectId,
      mode: tenant.mode,
      channel_id: channel.id,
      monitor_id: input.monitor.id,
      status: input.status,
      facts: text,
      state: 'pending',
      attempts: 0,
      next_attempt_at: iso(now),
      lease_until: null,
      lease_owner: null,
      give_up_at: iso(now + retryWindowMs),
      last_status: null,
      last_error: null,
      created_at: iso(now),
      updated_at: iso(now),
      finished_at: null,
    }));
    return { rows };
  }

  /** Inserts prepared notifications, in `db` when it is the caller's transaction. */
  async store(prepared: PreparedNotification, db?: Kysely<Database>): Promise<void> {
    await this.outbox.insert(prepared.rows, db);
  }

  /** This process's worker looks at the outbox now (after a `store` committed). */
  wake(): void {
    this.onEnqueued();
  }

  /** POST /channels/{id}/test: a `status: "test"` notification through the same outbox. */
  async sendTest(tenant: Tenant, channelId: string): Promise<EnqueuedDelivery> {
    const channel = await this.channels.get(tenant, channelId);
    if (channel.enabled !== 1) throw conflict(`channel ${channelId} is disabled (${channel.disabled_reason ?? 'no reason'}); PATCH {"enabled": true} first`);
    const now = iso(this.clock.now());
    const [delivery] = await this.enqueue(tenant, {
      channelIds: [channelId],
      monitor: { id: channel.id, name: `Test of channel "${channel.name}"`, kind: 'test' },
      status: 'test',
      group: {},
      value: null,
      condition: null,
      window: { from: now, to: now },
      started_at: now,
      resolved_at: null,
      events_total: 0,
      events: [],
      url: `${this.urls.api}/dashboard/`,
    });
    return delivery!;
  }

  /** A channel's deliveries, newest first, with every attempt (404 for another tenant's channel). */
  async deliveriesOfChannel(tenant: Tenant, channelId: string, page: PageRequest): Promise<DeliveryView[]> {
    await this.channels.get(tenant, channelId);
    return this.views(tenant, await this.outbox.listByChannel(tenant, channelId, page));
  }

  /** A monitor's notifications (its history), newest first, with every attempt. */
  async deliveriesOfMonitor(tenant: Tenant, monitorId: string, page: PageRequest): Promise<DeliveryView[]> {
    return this.views(tenant, await this.outbox.listByMonitor(tenant, monitorId, page));
  }

  /** When each of these monitors last notified (its firing or resolved notifications, not tests): monitor id → created_at. */
  lastNotifiedOf(tenant: Tenant, monitorIds: readonly string[]): Promise<Map<string, string>> {
    return this.outbox.lastOfMonitors(tenant, monitorIds);
  }

  private async views(tenant: Tenant, rows: NotificationsTable[]): Promise<DeliveryView[]> {
    const attempts = await this.outbox.attemptsOf(tenant, rows.map((r) => r.id));
    return rows.map((r) => ({
      id: r.id,
      channel_id: r.channel_id,
      monitor_id: r.monitor_id,
      status: r.status,
      state: r.state,
      attempt_count: r.attempts,
      next_attempt_at: r.state === 'pending' ? r.next_attempt_at : null,
      last_status: r.last_status,
      last_error: r.last_error,
      created_at: r.created_at,
      finished_at: r.finished_at,
      attempts: (attempts.get(r.id) ?? []).map(attemptView),
    }));
  }
}
