// Sign-in throttling shared through Redis: its own module, loaded only when OPS_REDIS_URL is set,
// so a server without Redis never loads ioredis (dashboard/capability.ts).
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import type { Logger } from '../kernel/logger.js';
import { memoryLimiter, signInLimit, type SignInLimiters } from './sign-in-limiters.js';

/**
 * Counted in Redis (OPS_REDIS_URL), so every API process and host shares one allowance per
 * e-mail and per address: an attacker spread over processes gets no more guesses. While Redis
 * does not answer, each process counts on its own (rate-limiter-flexible's insurance limiter)
 * rather than refusing every sign-in or letting every one through.
 */
export function redisSignInLimiters(url: string, log: Logger): SignInLimiters {
  const redis = new Redis(url, {
    commandTimeout: 500,
    connectTimeout: 1_000,
    // Disconnected, a command fails at once (and the insurance limiter answers) rather than queueing.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(2_000, 50 * 2 ** Math.min(times, 6)),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (!down) log.warn({ err: error }, 'sign-in throttling: Redis does not answer; each API process counts attempts on its own until it does');
    down = true;
  });
  redis.on('ready', () => {
    down = false;
  });
  const shared = (points: number, keyPrefix: string) =>
    new RateLimiterRedis({ storeClient: redis, points, duration: signInLimit.windowSeconds, keyPrefix: `ops:${keyPrefix}`, insuranceLimiter: memoryLimiter(points, keyPrefix) });
  return {
    byEmail: shared(signInLimit.perEmail, 'signin-email'),
    byAddress: shared(signInLimit.perAddress, 'signin-ip'),
    close: async () => {
      redis.disconnect();
    },
  };
}
