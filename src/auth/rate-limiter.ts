/**
 * Token bucket per API token, in this process: `perSecond` refill, `burst` capacity.
 * Several API hosts each enforce their own share; good enough until a shared store is needed.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one request from the bucket; returns what the RateLimit-* headers report. */
  take(key: string): { allowed: boolean; remaining: number; resetSeconds: number } {
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

  /** Buckets that have refilled completely carry no information; drop them. */
  private evictFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
  }
}
