import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../kernel/logger.js';
import { redactUrl } from '../cluster/redact-url.js';
import { LocalRateLimiter, type LimiterState, type RateDecision, type RateLimiter } from './rate-limiter.js';

export interface RedisRateLimiterOptions {
  /** OPS_REDIS_URL; `?keyPrefix=name:` in it prefixes every key (ioredis reads it). */
  url: string;
  perSecond: number;
  burst: number;
  log: Logger;
  /** The longest one Redis command may take before the in-process limiter answers (ms). */
  commandTimeoutMs?: number;
  /** After a timeout, how long requests skip Redis before trying it again (ms). */
  pauseMs?: number;
}

/** What the keys start with, before the token id (after any keyPrefix from the URL). */
const keyPrefix = 'ops:rl';

/**
 * The per-token limit shared by every process and host through Redis, with
 * rate-limiter-flexible's atomic counters (its own Lua, none of ours). The composition is
 * BurstyRateLimiter's, written out so the burst pool's remaining points reach
 * RateLimit-Remaining (BurstyRateLimiter reports only the first limiter's):
 *
 * - the rate: `perSecond` requests per fixed 1-second window (from the token's first request in it);
 * - the burst pool: `burst − perSecond` more requests per fixed window of ceil(burst / perSecond)
 *   seconds, the time a token bucket takes to refill completely, taken only when the rate's
 *   window is used up.
 *
 * So at most `burst` requests pass at once, as with the in-process bucket; sustained,
 * `perSecond` + (burst − perSecond) / ceil(burst / perSecond) per second pass at most (the
 * bucket: `perSecond`). With burst ≤ perSecond there is no pool: `perSecond` per 1-second window.
 *
 * Never hangs or fails a request: each command is bounded (`commandTimeoutMs`, 100 ms); while
 * Redis is disconnected, or for `pauseMs` after a command failed or timed out, the in-process
 * LocalRateLimiter answers (each process then admits a token's whole allowance). The outage is
 * logged once, and its end once.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly perSecond: number;
  readonly burst: number;
  readonly limit: number;
  private readonly redis: Redis;
  private readonly rate: RateLimiterRedis;
  private readonly pool: RateLimiterRedis | undefined;
  private readonly fallback: LocalRateLimiter;
  private readonly log: Logger;
  private readonly pauseMs: number;
  private pausedUntil = 0;
  private outage = false;
  private closed = false;

  constructor(options: RedisRateLimiterOptions) {
    const { perSecond, burst } = options;
    this.perSecond = perSecond;
    this.burst = burst;
    this.limit = Math.max(perSecond, burst);
    this.log = options.log;
    this.pauseMs = options.pauseMs ?? 1_000;
    this.fallback = new LocalRateLimiter(perSecond, burst);
    this.redis = new Redis(options.url, {
      commandTimeout: options.commandTimeoutMs ?? 100,
      connectTimeout: 1_000,
      // Disconnected, a command fails at once rather than waiting in a queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // Reconnects forever: 100 ms, 200 ms… then every 2 s.
      retryStrategy: (times) => Math.min(2_000, 50 * 2 ** Math.min(times, 6)),
    });
    this.redis.on('error', (error: Error) => this.wentDown(error));
    this.redis.on('close', () => this.wentDown(undefined));
    this.redis.on('ready', () => this.cameBack());
    this.rate = new RateLimiterRedis({ storeClient: this.redis, keyPrefix: `${keyPrefix}:rate`, points: perSecond, duration: 1, rejectIfRedisNotReady: true });
    if (burst > perSecond) {
      this.pool = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${keyPrefix}:burst`,
        points: burst - perSecond,
        duration: Math.max(1, Math.ceil(burst / perSecond)),
        rejectIfRedisNotReady: true,
      });
    }
  }

  /** Resolves once connected, or after `ms` (the server starts either way; until then the fallback answers). */
  ready(ms: number): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        this.redis.off('error', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.redis.once('ready', done);
      this.redis.once('error', done);
    });
  }

  take(key: string): RateDecision | Promise<RateDecision> {
    if (this.redis.status !== 'ready' || performance.now() < this.pausedUntil) return this.fallback.take(key);
    return this.shared(key).then(
      (decision) => {
        this.cameBack();
        return decision;
      },
      (error: unknown) => {
        this.wentDown(error);
        this.pausedUntil = performance.now() + this.pauseMs;
        return this.fallback.take(key);
      },
    );
  }

  async probe(): Promise<LimiterState> {
    if (this.redis.status !== 'ready') return 'down';
    try {
      await this.redis.ping();
      return 'up';
    } catch {
      return 'down';
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.redis.disconnect();
  }

  /** One request against the shared counters: the rate's window first, the burst pool when it is used up. */
  private async shared(key: string): Promise<RateDecision> {
    // The pool is read beside the rate's increment (one round trip): what it still holds is
    // part of RateLimit-Remaining even while the rate's window admits.
    const [rate, poolSeen] = await Promise.all([outcome(this.rate.consume(key)), this.pool ? this.pool.get(key) : null]);
    const pool = this.pool;
    if (rate.allowed) {
      const poolLeft = pool ? Math.max(0, pool.points - (poolSeen?.consumedPoints ?? 0)) : 0;
      return { allowed: true, remaining: rate.res.remainingPoints + poolLeft, resetSeconds: seconds(Math.max(rate.res.msBeforeNext, poolSeen?.msBeforeNext ?? 0)) };
    }
    if (!pool) return { allowed: false, remaining: 0, resetSeconds: Math.max(1, seconds(rate.res.msBeforeNext)) };
    const extra = await outcome(pool.consume(key));
    if (extra.allowed) {
      return { allowed: true, remaining: extra.res.remainingPoints, resetSeconds: seconds(Math.max(rate.res.msBeforeNext, extra.res.msBeforeNext)) };
    }
    // The next request passes when either window starts again.
    return { allowed: false, remaining: 0, resetSeconds: Math.max(1, seconds(Math.min(rate.res.msBeforeNext, extra.res.msBeforeNext))) };
  }

  private wentDown(error: unknown): void {
    if (this.outage || this.closed) return;
    this.outage = true;
    this.log.warn(
      { err: error, redis: redactUrl(this.redisUrl()) },
      'rate limit: Redis is unreachable or slow; each process limits tokens on its own until it answers again',
    );
  }

  private cameBack(): void {
    if (!this.outage || this.closed) return;
    this.outage = false;
    this.pausedUntil = 0;
    this.log.info({ redis: redactUrl(this.redisUrl()) }, 'rate limit: Redis answers again; limits are shared by every process');
  }

  private redisUrl(): string {
    const { host, port } = this.redis.options;
    return `redis://${host ?? '127.0.0.1'}:${port ?? 6379}`;
  }
}

/** A consume's answer: admitted, or refused with the counters (rate-limiter-flexible rejects with a RateLimiterRes). */
async function outcome(consumed: Promise<RateLimiterRes>): Promise<{ allowed: boolean; res: RateLimiterRes }> {
  try {
    return { allowed: true, res: await consumed };
  } catch (error) {
    if (error instanceof RateLimiterRes) return { allowed: false, res: error };
    throw error;
  }
}

const seconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));
