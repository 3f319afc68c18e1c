import type { ChannelKind, NotificationStatus } from './notification.js';

/** Metadata table `channels` (migration 0010-notifications): where a tenant's notifications go. */
export interface ChannelsTable {
  /** ch_<ULID> */
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  name: string;
  kind: ChannelKind;
  /** A secret for discord/slack (lists mask it). */
  url: string;
  /**
   * `whsec_…` of a webhook channel, kept to sign each request (it is shown once and never logged).
   * In the clear like the Discord and Slack URLs beside it: the process must be able to sign.
   */
  signing_secret: string | null;
  /** 0 once disabled (20 failed attempts in a row, or PATCH); PATCH enabled:true sets 1 again. */
  enabled: number;
  disabled_reason: string | null;
  /** Failed attempts since the last success. */
  consecutive_failures: number;
  /** No request to this channel before this time: what the receiver asked (429, X-RateLimit-*). */
  not_before: string | null;
  created_at: string;
  updated_at: string;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** Metadata table `notifications`: the outbox, one row per notification and channel. */
export interface NotificationsTable {
  /** dlv_<ULID>: the delivery id every attempt carries (X-Ops-Delivery-Id). */
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  channel_id: string;
  /** The monitor that notified (its history lists these), or the channel's id for a test. */
  monitor_id: string;
  status: NotificationStatus;
  /** JSON of NotificationFacts, rendered for the channel's kind at each attempt. */
  facts: string;
  state: DeliveryState;
  attempts: number;
  /** Due from this time (the next retry, or when the channel's pause ends). */
  next_attempt_at: string;
  /** Held by a worker until this time (claim: delivery-worker.ts); null when nobody holds it. */
  lease_until: string | null;
  lease_owner: string | null;
  /** After it, a failing notification is marked failed: stored time + 1 hour. */
  give_up_at: string;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  /** When it was delivered or marked failed. */
  finished_at: string | null;
}

/** Metadata table `notification_attempts`: every request sent for a notification. */
export interface NotificationAttemptsTable {
  /** att_<ULID> */
  id: string;
  notification_id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  attempted_at: string;
  /** The HTTP status, null when there was none (timeout, connection refused, address refused). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    channels: ChannelsTable;
    notifications: NotificationsTable;
    notification_attempts: NotificationAttemptsTable;
  }
}
