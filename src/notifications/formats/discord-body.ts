import type { EvidenceFile, NotificationFacts } from '../notification.js';
import { eventLine, groupText, isImage, show, statusWord, truncate } from './text.js';

/** Discord's documented embed limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits). */
export const discordLimits = { title: 256, description: 4096, fields: 25, fieldName: 256, fieldValue: 1024, footer: 2048, total: 6000 } as const;

export interface DiscordEmbed {
  title: string;
  description: string;
  url?: string;
  color: number;
  timestamp?: string;
  fields: Array<{ name: string; value: string; inline?: boolean }>;
  image?: { url: string };
  footer: { text: string };
}

export interface DiscordBody {
  username: string;
  embeds: [DiscordEmbed];
  /** Nothing an event says can ping @everyone or a role. */
  allowed_mentions: { parse: [] };
}

const colours = { firing: 0xd83c3e, resolved: 0x2ea043, test: 0x5865f2 } as const;
const httpUrl = (url: string) => /^https?:\/\//i.test(url) && url.length <= 2048;
const link = (file: EvidenceFile) => `[${file.filename.replace(/[[\]()]/g, '_')}](${file.url})`;

/**
 * The notification as one Discord embed: the monitor and status as title, the value, condition,
 * group and window as description, one field per event (its evidence linked), the first
 * evidence image as the embed's image. Every part is cut to Discord's limits and the whole to its
 * 6,000 characters (later fields dropped first): never a body Discord would refuse.
 */
export function discordBody(facts: NotificationFacts, deliveryId: string): DiscordBody {
  const images = facts.events.flatMap((e) => e.evidence ?? []).filter((f) => isImage(f.content_type) && httpUrl(f.url));
  const image = images[0];
  const title = truncate(`${statusWord[facts.status]}: ${facts.monitor.name || facts.monitor.id}`, discordLimits.title);
  const footer = truncate(`monitor ${facts.monitor.id} · delivery ${deliveryId}`, discordLimits.footer);
  const lines = [
    facts.value !== null ? `**Value** ${show(facts.value)}` : '',
    facts.condition !== null && facts.condition !== undefined ? `**Condition** ${show(facts.condition)}` : '',
    Object.keys(facts.group).length ? `**Group** ${groupText(facts.group)}` : '',
    `**Window** ${facts.window.from} → ${facts.window.to}`,
    `**Started** ${facts.started_at}${facts.resolved_at ? ` · **Resolved** ${facts.resolved_at}` : ''}`,
    `**Events** ${facts.events_total}`,
  ].filter(Boolean);
  let budget = discordLimits.total - title.length - footer.length;
  const description = truncate(lines.join('\n'), Math.min(discordLimits.description, Math.max(0, budget - 200)));
  budget -= description.length;
  const fields: DiscordEmbed['fields'] = [];
  for (const [i, event] of facts.events.entries()) {
    if (fields.length >= discordLimits.fields) break;
    const name = truncate(`#${i + 1} ${show(event.event) || 'event'}`, discordLimits.fieldName);
    const evidence = (event.evidence ?? []).filter((f) => f !== image).map(link).join(' ');
    const body = [eventLine(event), event.payload !== undefined ? `\`${show(event.payload)}\`` : ''].filter(Boolean).join('\n');
    const evidencePart = evidence ? `\n${evidence}` : '';
    const room = Math.min(discordLimits.fieldValue, budget - name.length);
    // A field needs a non-empty name and value; one that no longer fits ends the list.
    if (room < 20) break;
    // The evidence links are kept whole when they leave room for the event's text.
    const value = (evidencePart.length <= room / 2 ? truncate(body, room - evidencePart.length) + evidencePart : truncate(body + evidencePart, room)) || '-';
    fields.push({ name, value });
    budget -= name.length + value.length;
  }
  const embed: DiscordEmbed = {
    title,
    description,
    ...(httpUrl(facts.url) ? { url: facts.url } : {}),
    color: colours[facts.status],
    ...(Number.isNaN(Date.parse(facts.started_at)) ? {} : { timestamp: new Date(Date.parse(facts.started_at)).toISOString() }),
    fields,
    ...(image ? { image: { url: image.url } } : {}),
    footer: { text: footer },
  };
  return { username: 'opsplatform', embeds: [embed], allowed_mentions: { parse: [] } };
}

/** The characters Discord counts toward the 6,000 of an embed. */
export const embedCharacters = (e: DiscordEmbed): number =>
  e.title.length + e.description.length + e.footer.text.length + e.fields.reduce((n, f) => n + f.name.length + f.value.length, 0);
