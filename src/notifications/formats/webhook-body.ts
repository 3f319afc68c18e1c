import type { NotificationFacts, WebhookBody } from '../notification.js';

/** The webhook JSON (DECISIONS.md §18), exactly the facts with `version` and `delivery_id` first. */
export function webhookBody(facts: NotificationFacts, deliveryId: string): string {
  const body: WebhookBody = { version: '1', delivery_id: deliveryId, ...facts };
  return JSON.stringify(body);
}
