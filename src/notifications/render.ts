import type { NotificationFacts } from './notification.js';
import type { ChannelsTable } from './tables.js';
import { webhookBody } from './formats/webhook-body.js';
import { discordBody } from './formats/discord-body.js';
import { slackBody } from './formats/slack-body.js';
import { signatureHeader } from './signature.js';

/**
 * The request of one attempt for a channel: its kind's body and headers. Every request carries
 * the notification's delivery id (the same on every retry, for receivers to de-duplicate); a
 * webhook's is signed anew at each attempt (`t` is the attempt's time).
 */
export function renderRequest(channel: Pick<ChannelsTable, 'kind' | 'signing_secret'>, facts: NotificationFacts, deliveryId: string, unixSeconds: number) {
  const headers: Record<string, string> = { 'x-ops-delivery-id': deliveryId };
  if (channel.kind === 'discord') return { body: JSON.stringify(discordBody(facts, deliveryId)), headers };
  if (channel.kind === 'slack') return { body: JSON.stringify(slackBody(facts, deliveryId)), headers };
  const body = webhookBody(facts, deliveryId);
  if (channel.signing_secret) headers['x-ops-signature'] = signatureHeader(channel.signing_secret, body, unixSeconds);
  return { body, headers };
}
