import type { Api } from '../http/types.js';

/** A store as /readyz reports it. `off`: not configured (Redis, NATS). */
export interface StoreReport {
  state: 'up' | 'down' | 'off';
  /** Why it is down: the check's error message. */
  error?: string;
}

export interface HealthChecks {
  /**
   * The stores this process cannot serve without (metadata, events, blobs), by name: each
   * check rejects while its store is unreachable, and /readyz then answers 503.
   */
  required: Record<string, () => Promise<void>>;
  /**
   * The stores it degrades without (Redis: per-process rate limits; NATS: tail by polling,
   * token caches bounded by OPS_AUTH_CACHE_MS), by name: shown, never a 503.
   */
  optional: Record<string, () => Promise<'up' | 'down' | 'off'>>;
}

/** How long one check may take before its store counts as down: /readyz never hangs. */
const checkTimeoutMs = 2_000;

/**
 * Liveness and readiness, outside /v1 and without authentication (DECISIONS.md §2).
 * GET /readyz: `{ ok, stores: { metadata: {state, error?}, events, blobs, redis, nats } }`,
 * every check run at once and bounded; 503 with Retry-After while a required store is down
 * (docs/cross-process.md).
 */
export function registerHealthRoutes(app: Api, checks: HealthChecks): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const required = Object.entries(checks.required).map(async ([name, check]): Promise<[string, StoreReport]> => {
      try {
        await bounded(check());
        return [name, { state: 'up' }];
      } catch (error) {
        reply.log.warn({ err: error, store: name }, 'readiness check failed');
        return [name, { state: 'down', error: describe(error) }];
      }
    });
    const optional = Object.entries(checks.optional).map(async ([name, check]): Promise<[string, StoreReport]> => {
      try {
        return [name, { state: (await bounded(check())) ?? 'down' }];
      } catch (error) {
        return [name, { state: 'down', error: describe(error) }];
      }
    });
    const requiredReports = await Promise.all(required);
    const stores = Object.fromEntries([...requiredReports, ...(await Promise.all(optional))]);
    const ok = requiredReports.every(([, report]) => report.state === 'up');
    if (!ok) reply.code(503).header('Retry-After', '1');
    return { ok, stores };
  });
}

function bounded<T>(check: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    check,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${checkTimeoutMs} ms`)), checkTimeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * What an anonymous caller may read about a store that is down: its kind of failure, never the
 * error's text (it names hosts, buckets and ports). The log has the whole error.
 */
const describe = (error: unknown): string => {
  const reason = (error as { reason?: unknown } | null)?.reason;
  if (typeof reason === 'string') return reason;
  if (error instanceof Error && /no answer within|timed out|timeout/i.test(error.message)) return 'no answer in time (details in the server log)';
  return 'not reachable (details in the server log)';
};
