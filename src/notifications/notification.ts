/**
 * What a notification says (DECISIONS.md §18), independent of where it goes: the facts a monitor
 * hands to `NotificationService.enqueue`, stored in the outbox, and rendered per channel kind at
 * each attempt (formats/).
 */

export type ChannelKind = 'webhook' | 'discord' | 'slack';
export const channelKinds: readonly ChannelKind[] = ['webhook', 'discord', 'slack'];

export type NotificationStatus = 'firing' | 'resolved' | 'test';

export interface MonitorRef {
  id: string;
  name: string;
  /** `threshold` or `match`; `test` for a channel's test notification. */
  kind: string;
}

/** A file a notified event names, of the event's own project and mode (evidence.ts). */
export interface EvidenceFile {
  id: string;
  url: string;
  filename: string;
  content_type: string;
}

/** An event as the query API returns it, plus the files its payload names. */
export type NotifiedEvent = Record<string, unknown> & { evidence?: EvidenceFile[] };

export interface NotificationFacts {
  monitor: MonitorRef;
  status: NotificationStatus;
  /** The group's field values (`{}` for a monitor without `by`). */
  group: Record<string, unknown>;
  value: number | null;
  condition: unknown;
  window: { from: string; to: string };
  started_at: string;
  resolved_at?: string | null;
  events_total: number;
  /** At most `maxNotifiedEvents` (enqueue keeps the first ones). */
  events: NotifiedEvent[];
  /** Opens the dashboard's explorer on the monitor's query and window. */
  url: string;
}

export const maxNotifiedEvents = 10;

/** The webhook JSON of §18: the facts with the version and the delivery id. */
export interface WebhookBody extends NotificationFacts {
  version: '1';
  delivery_id: string;
}
