/**
 * Idempotency-Key (DECISIONS.md §16; docs/idempotency.md). A route takes it with one line in its
 * config, `idempotency: 'body'` (Fastify reads the body) or `'stream'` (the handler streams
 * request.raw); a route whose effect commits in the metadata database passes
 * `await answerInCommit(request, status)` to its service, which runs it in that transaction; an
 * ingest route calls `idempotencyOf(request)?.deriveEventIds(events)` before appending.
 */
export { idempotencyPlugin, idempotencyOf, answerInCommit } from './plugin.js';
export type { RecordAnswer } from './keyed-request.js';
export { IdempotencyStore } from './idempotency-store.js';
export { openIdempotency } from './capability.js';
