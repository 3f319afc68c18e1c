import type { AppContext } from '../app/context.js';
import type { Capability, Readiness } from '../kernel/capability.js';
import type { RateLimiter } from '../auth/rate-limiter.js';
import { registerHealthRoutes } from './routes.js';

/**
 * /healthz and /readyz, outside /v1 (DECISIONS.md §2). `readiness` is read when the routes are
 * registered, after every other capability was opened: the stores they need (events, blobs)
 * are required beside the metadata; Redis and NATS are shown, never a 503 (the process degrades).
 */
export function openHealth({ ctx, ...deps }: { ctx: AppContext; readiness: () => Readiness; rateLimiter: RateLimiter }): Capability {
  return {
    name: 'health',
    root: (app) =>
      registerHealthRoutes(app, {
        required: { metadata: () => ctx.metadata.ping(), ...deps.readiness() },
        optional: { redis: () => deps.rateLimiter.probe(), nats: async () => ctx.bus.state() },
      }),
  };
}
