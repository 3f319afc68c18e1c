import type { Logger } from '../kernel/logger.js';
import { LocalRateLimiter, type RateLimiter } from './rate-limiter.js';

/**
 * The limiter the configuration asks for: shared through Redis when OPS_REDIS_URL is set (its
 * client loaded only then), otherwise in process. Waits up to `readyMs` for Redis so the first
 * requests already count in the shared store; an unreachable Redis delays nothing (refused at
 * once) and the in-process limiter answers until it is back.
 */
export async function openRateLimiter(
  config: { redisUrl: string | undefined; rateLimitPerSecond: number; rateLimitBurst: number },
  log: Logger,
  readyMs = 2_000,
): Promise<RateLimiter> {
  if (!config.redisUrl) return new LocalRateLimiter(config.rateLimitPerSecond, config.rateLimitBurst);
  const { RedisRateLimiter } = await import('./redis-rate-limiter.js');
  const limiter = new RedisRateLimiter({ url: config.redisUrl, perSecond: config.rateLimitPerSecond, burst: config.rateLimitBurst, log });
  await limiter.ready(readyMs);
  return limiter;
}
