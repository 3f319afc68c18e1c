import { RateLimiterMemory, type RateLimiterAbstract } from 'rate-limiter-flexible';

/** DECISIONS.md §17: sign-in attempts limited per e-mail address and per client address. */
export const signInLimit = { perEmail: 10, perAddress: 30, windowSeconds: 15 * 60 };

/** The two allowances each sign-in attempt takes a point of (docs/dashboard.md, "Sign-in throttling"). */
export interface SignInLimiters {
  byEmail: RateLimiterAbstract;
  byAddress: RateLimiterAbstract;
  close(): Promise<void>;
}

/** An allowance counted in this process (also the Redis limiters' insurance while Redis does not answer). */
export const memoryLimiter = (points: number, keyPrefix: string) => new RateLimiterMemory({ points, duration: signInLimit.windowSeconds, keyPrefix });

/** Counted in this process: opsctl, and a server without OPS_REDIS_URL. */
export function memorySignInLimiters(): SignInLimiters {
  return { byEmail: memoryLimiter(signInLimit.perEmail, 'signin-email'), byAddress: memoryLimiter(signInLimit.perAddress, 'signin-ip'), close: async () => {} };
}
