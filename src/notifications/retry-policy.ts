/**
 * When to send again (DECISIONS.md §18): 2xx is delivered; 5xx, 408, 429, timeouts and
 * connection errors are retried with exponential backoff for up to an hour, waiting at least
 * what the receiver asked (Retry-After in seconds or as an HTTP date, Discord's JSON
 * `retry_after` in seconds); any other status (4xx, and 3xx: redirects are not followed) fails
 * at once. Pure: the worker feeds it answers, the tests feed it headers.
 */

/** How long a notification keeps being retried after it was stored. */
export const retryWindowMs = 60 * 60 * 1000;
/** The longest wait between two attempts of one notification. */
export const maxBackoffMs = 5 * 60 * 1000;

export type Verdict = 'delivered' | 'retry' | 'fail';

export function verdictOf(status: number): Verdict {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 500 || status === 429 || status === 408) return 'retry';
  return 'fail';
}

/** The wait after the n-th failed attempt (1-based): base, 2 × base, 4 × base… at most maxBackoffMs, with ±10 % jitter. */
export function backoffMs(failedAttempts: number, baseMs: number, random: () => number = Math.random): number {
  const exact = Math.min(baseMs * 2 ** Math.max(0, failedAttempts - 1), maxBackoffMs);
  return Math.round(exact * (0.9 + 0.2 * random()));
}

/** Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP date, as milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
  return Math.max(0, at - now);
}

/** Discord's 429 body `{"retry_after": 1.234, "global": false, …}` (seconds, float) as milliseconds. */
export function discordRetryAfter(body: string): number | undefined {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const seconds = (parsed as { retry_after?: unknown }).retry_after;
    return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Discord's bucket headers on any answer: with `X-RateLimit-Remaining: 0`, no request may go to
 * that webhook before `X-RateLimit-Reset-After` seconds (float) have passed.
 */
export function rateLimitPauseMs(headers: Readonly<Record<string, string | undefined>>): number | undefined {
  if (headers['x-ratelimit-remaining']?.trim() !== '0') return undefined;
  const reset = Number(headers['x-ratelimit-reset-after']);
  return Number.isFinite(reset) && reset > 0 ? Math.ceil(reset * 1000) : undefined;
}

/** How long the receiver asked to be left alone: the longest of what its answer says, if it says anything. */
export function askedWaitMs(answer: { headers: Readonly<Record<string, string | undefined>>; body: string }, now: number): number | undefined {
  const asked = [parseRetryAfter(answer.headers['retry-after'], now), discordRetryAfter(answer.body), rateLimitPauseMs(answer.headers)].filter(
    (ms): ms is number => ms !== undefined,
  );
  return asked.length ? Math.max(...asked) : undefined;
}
