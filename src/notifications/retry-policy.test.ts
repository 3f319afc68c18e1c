import { test } from 'node:test';
import assert from 'node:assert/strict';
import { askedWaitMs, backoffMs, discordRetryAfter, maxBackoffMs, parseRetryAfter, rateLimitPauseMs, verdictOf } from './retry-policy.js';

test('2xx delivered; 5xx, 408, 429 retried; other 4xx and 3xx fail at once', () => {
  assert.deepEqual([200, 204, 500, 503, 408, 429, 400, 401, 404, 410, 302].map(verdictOf), [
    'delivered', 'delivered', 'retry', 'retry', 'retry', 'retry', 'fail', 'fail', 'fail', 'fail', 'fail',
  ]);
});

test('backoff doubles from the base and stops at five minutes', () => {
  const mid = () => 0.5;
  assert.deepEqual([1, 2, 3, 4].map((n) => backoffMs(n, 1000, mid)), [1000, 2000, 4000, 8000]);
  assert.equal(backoffMs(30, 1000, mid), maxBackoffMs);
  assert.ok(backoffMs(1, 1000, () => 0) >= 900 && backoffMs(1, 1000, () => 1) <= 1100);
});

test('Retry-After: seconds or an HTTP date', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(parseRetryAfter('3', now), 3000);
  assert.equal(parseRetryAfter('1.5', now), 1500);
  assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:07 GMT', now), 7000);
  assert.equal(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now), 0);
  assert.equal(parseRetryAfter('soon', now), undefined);
  assert.equal(parseRetryAfter(undefined, now), undefined);
});

test("Discord's retry_after (float seconds) and its X-RateLimit headers", () => {
  assert.equal(discordRetryAfter('{"message":"You are being rate limited.","retry_after":0.625,"global":false}'), 625);
  assert.equal(discordRetryAfter('not json'), undefined);
  assert.equal(discordRetryAfter('{"retry_after":"x"}'), undefined);
  assert.equal(rateLimitPauseMs({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '1.25' }), 1250);
  assert.equal(rateLimitPauseMs({ 'x-ratelimit-remaining': '3', 'x-ratelimit-reset-after': '1.25' }), undefined);
  assert.equal(askedWaitMs({ headers: { 'retry-after': '1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '2.5' }, body: '{"retry_after":2}' }, 0), 2500);
});
