import { iso } from '../shared/clock.js';
import type { AttemptRecord } from './outbox.js';
import type { AttemptAnswer } from './send.js';
import type { NotificationsTable } from './tables.js';
import { askedWaitMs, backoffMs, rateLimitPauseMs, verdictOf } from './retry-policy.js';

const snippet = (body: string) => body.replace(/\s+/g, ' ').trim().slice(0, 200);

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
  const error = answer.error ?? (verdict === 'delivered' ? null : `HTTP ${answer.status}${snippet(answer.body) ? `: ${snippet(answer.body)}` : ''}`);
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
