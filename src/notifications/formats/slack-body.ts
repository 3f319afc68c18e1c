import type { EvidenceFile, NotificationFacts } from '../notification.js';
import { eventLine, groupText, isImage, show, statusWord, truncate } from './text.js';

/** Slack's documented Block Kit limits (https://api.slack.com/reference/block-kit/blocks). */
export const slackLimits = { blocks: 50, sectionText: 3000, headerText: 150, contextText: 3000, imageUrl: 3000, altText: 2000, fallbackText: 3000 } as const;

type Text = { type: 'mrkdwn' | 'plain_text'; text: string };
export type SlackBlock =
  | { type: 'header'; text: Text }
  | { type: 'section'; text: Text }
  | { type: 'image'; image_url: string; alt_text: string }
  | { type: 'context'; elements: Text[] };

export interface SlackBody {
  /** Shown in notifications and by clients that do not render blocks. */
  text: string;
  blocks: SlackBlock[];
}

/** Slack's mrkdwn control characters (https://api.slack.com/reference/surfaces/formatting#escaping). */
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const httpUrl = (url: string) => /^https?:\/\//i.test(url) && url.length <= slackLimits.imageUrl && !/[<>|\s]/.test(url);
const link = (file: EvidenceFile) => (httpUrl(file.url) ? `<${file.url}|${escape(file.filename).replace(/\|/g, '¦')}>` : escape(file.filename));
const mrkdwn = (text: string, max: number): Text => ({ type: 'mrkdwn', text: truncate(text, max) || ' ' });

/**
 * The notification as Slack blocks: a header, the facts, one section per event (its evidence
 * linked), an image block for the first evidence image, a link to the explorer. Each text is cut
 * to its limit and the list to 50 blocks: never a body Slack would refuse.
 */
export function slackBody(facts: NotificationFacts, deliveryId: string): SlackBody {
  const images = facts.events.flatMap((e) => e.evidence ?? []).filter((f) => isImage(f.content_type) && httpUrl(f.url));
  const image = images[0];
  const heading = `${statusWord[facts.status]}: ${facts.monitor.name || facts.monitor.id}`;
  const facts_ = [
    facts.value !== null ? `*Value* ${escape(show(facts.value))}` : '',
    facts.condition !== null && facts.condition !== undefined ? `*Condition* ${escape(show(facts.condition))}` : '',
    Object.keys(facts.group).length ? `*Group* ${escape(groupText(facts.group))}` : '',
    `*Window* ${escape(facts.window.from)} → ${escape(facts.window.to)}`,
    `*Started* ${escape(facts.started_at)}${facts.resolved_at ? ` · *Resolved* ${escape(facts.resolved_at)}` : ''}`,
    `*Events* ${facts.events_total}`,
  ].filter(Boolean);
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(heading, slackLimits.headerText) || ' ' } },
    { type: 'section', text: mrkdwn(facts_.join('\n'), slackLimits.sectionText) },
  ];
  for (const event of facts.events) {
    const evidence = (event.evidence ?? []).filter((f) => f !== image).map(link).join(' ');
    const payload = event.payload !== undefined ? `\n\`${escape(show(event.payload)).replace(/`/g, "'")}\`` : '';
    const tail = evidence ? `\n${evidence}` : '';
    const room = slackLimits.sectionText - tail.length;
    const text = room > 200 ? truncate(escape(eventLine(event)) + payload, room) + tail : escape(eventLine(event)) + payload + tail;
    blocks.push({ type: 'section', text: mrkdwn(text, slackLimits.sectionText) });
  }
  if (image) blocks.push({ type: 'image', image_url: image.url, alt_text: truncate(image.filename, slackLimits.altText) || 'evidence' });
  const footer = `${httpUrl(facts.url) ? `<${facts.url}|Open in the explorer> · ` : ''}monitor ${escape(facts.monitor.id)} · delivery ${deliveryId}`;
  blocks.push({ type: 'context', elements: [mrkdwn(footer, slackLimits.contextText)] });
  // At most 50: events past the room are dropped, header, image and footer kept.
  if (blocks.length > slackLimits.blocks) blocks.splice(slackLimits.blocks - (image ? 2 : 1), blocks.length - slackLimits.blocks);
  return { text: truncate(heading, slackLimits.fallbackText), blocks };
}
