
/** What one request's admission reports: the RateLimit-* headers, and Retry-After when refused. */
export interface RateDecision {
  allowed: boolean;
  remaining: number;
  /** RateLimit-Reset, and Retry-After when refused (then at least 1). */
  resetSeconds: number;
}

/** The shared store's state for /readyz: 'off' when the limit is per process by configuration. */
export type LimiterState = 'up' | 'down' | 'off';

/**
 * The per-token rate limit (OPS_RATE_LIMIT_PER_SECOND, OPS_RATE_LIMIT_BURST). Two
 * implementations: LocalRateLimiter below (each process counts on its own) and
 * RedisRateLimiter (redis-rate-limiter.ts: one count for the token across every process and
 * host; docs/cross-process.md gives its exact semantics).
 */
export interface RateLimiter {
  readonly perSecond: number;
  readonly burst: number;
  /** What RateLimit-Limit reports: the most requests admitted at once. */
  readonly limit: number;
  /**
   * Takes one request of the token's allowance. Synchronous in process (no promise per
   * request); a promise when a shared store is asked, which settles within a bound and never
   * rejects (the store unreachable or slow: the in-process limiter answers instead).
   */
  take(key: string): RateDecision | Promise<RateDecision>;
  /** For /readyz: asks the shared store now (bounded); 'off' without one. */
  probe(): Promise<LimiterState>;
  close(): Promise<void>;
}

/**
 * Token bucket per API token, in this process: `perSecond` refill, `burst` capacity. The limit
 * when OPS_REDIS_URL is unset, and the fallback of RedisRateLimiter while Redis is unreachable
 * (then each process admits its own full allowance).
 */
export class LocalRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get limit(): number {
    return this.burst;
  }

  take(key: string): RateDecision {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 100_000) this.evictFull(now);
    const missing = this.burst - bucket.tokens;
    return {
      allowed,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.max(allowed ? 0 : 1, Math.ceil(missing / this.perSecond)),
    };
  }

  probe = async (): Promise<LimiterState> => 'off';

  close = async (): Promise<void> => {};

  /** Buckets that have refilled completely carry no information; drop them. */
  private evictFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
  }
}
