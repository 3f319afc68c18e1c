import { STATUS_CODES } from 'node:http';
import { iso } from '../shared/clock.js';
import type { AttemptRecord } from './outbox.js';
import type { AttemptAnswer } from './send.js';
import type { NotificationsTable } from './tables.js';
import { askedWaitMs, backoffMs, rateLimitPauseMs, verdictOf } from './retry-policy.js';

/**
 * Discord's and Slack's documented webhook errors, recognised in an answer and named in our own
 * words. Nothing else of an answer is ever shown: a receiver's body is what a tenant would read
 * through our server if it were an internal address, so an error says the status and, at most,
 * which of these known errors it was.
 */
const discordErrors: Readonly<Record<number, string>> = {
  10015: 'Discord: unknown webhook (deleted, or the URL is wrong)',
  50027: "Discord: invalid webhook token (the URL's token is wrong)",
  50006: 'Discord: the message is empty',
  50035: 'Discord: the message was refused as invalid (a field over its limit)',
  40005: 'Discord: the message is too large',
  50013: 'Discord: the webhook lacks the permission to post there',
};
const slackErrors: ReadonlySet<string> = new Set([
  'invalid_payload', 'no_text', 'invalid_blocks', 'too_many_attachments', 'no_service', 'no_service_id', 'no_team',
  'team_disabled', 'invalid_token', 'channel_not_found', 'channel_is_archived', 'action_prohibited',
  'posting_to_general_channel_denied', 'user_not_found', 'no_active_hooks',
]);

/** `HTTP 404 Not Found`, and which known Discord or Slack error the body names, if any. */
export function describeAnswer(status: number, body: string): string {
  const head = `HTTP ${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;
  const text = body.trim();
  if (slackErrors.has(text)) return `${head} (Slack: ${text})`;
  if (text.startsWith('{')) {
    try {
      const code = (JSON.parse(text) as { code?: unknown }).code;
      if (typeof code === 'number' && discordErrors[code]) return `${head} (${discordErrors[code]})`;
    } catch {
      // not JSON: only the status is told
    }
  }
  return head;
}

/**
 * What an attempt's answer means for the notification and its channel (retry-policy.ts's
 * rules): delivered, failed at once, or due again after the backoff or the wait the receiver
 * asked — failed when that would pass the row's hour. A rate-limited answer (429, or Discord's
 * X-RateLimit-Remaining: 0) also pauses the channel, so its other notifications wait as well.
 */
export function outcomeOf(row: Pick<NotificationsTable, 'attempts' | 'give_up_at' | 'next_attempt_at'>, answer: AttemptAnswer, now: number, backoffBaseMs: number): AttemptRecord {
  const at = iso(now);
  const attempt = { attempted_at: at, status_code: answer.status, latency_ms: answer.latencyMs, error: answer.error };
  const verdict = answer.status === null ? (answer.permanent ? 'fail' : 'retry') : answer.error ? 'fail' : verdictOf(answer.status);
  const asked = answer.status === null ? undefined : askedWaitMs(answer, now);
  const pause = answer.status === 429 ? asked : rateLimitPauseMs(answer.headers);
  const channelNotBefore = pause !== undefined ? iso(now + pause) : undefined;
  const error = answer.error ?? (verdict === 'delivered' ? null : answer.status === null ? 'no answer' : describeAnswer(answer.status, answer.body));
  if (attempt.error === null && error !== null) attempt.error = error;
  const finished = (state: 'delivered' | 'failed', lastError: string | null): AttemptRecord => ({
    attempt,
    row: { state, next_attempt_at: row.next_attempt_at, last_status: answer.status, last_error: lastError, finished_at: at },
    success: state === 'delivered',
    channelNotBefore,
  });
  if (verdict === 'delivered') return finished('delivered', null);
  if (verdict === 'fail') return finished('failed', error);
  const next = now + Math.max(backoffMs(row.attempts + 1, backoffBaseMs), asked ?? 0);
  if (iso(next) > row.give_up_at) return finished('failed', `${error}; given up: still failing after an hour of retries`);
  return { attempt, row: { state: 'pending', next_attempt_at: iso(next), last_status: answer.status, last_error: error, finished_at: null }, success: false, channelNotBefore };
}
