import type { IncomingMessage } from 'node:http';
import pino from 'pino';

/**
 * Anything shaped like an API token (`ops_live_…`, `ops_test_…`, also cut short). A client that
 * puts its token in a URL (`?token=…`, a path segment) must not find it in our logs or in an
 * error body that echoes the path.
 */
const tokenShape = /ops_(live|test)_[0-9A-Za-z]+/g;

export function redactTokens(text: string): string {
  return text.includes('ops_') ? text.replace(tokenShape, 'ops_$1_[redacted]') : text;
}

/** Fastify's request serializer with the URL redacted. */
function redactedRequest(req: IncomingMessage & { routeOptions?: unknown }) {
  return {
    method: req.method,
    url: redactTokens(req.url ?? ''),
    host: req.headers?.host,
    remoteAddress: req.socket?.remoteAddress,
    remotePort: req.socket?.remotePort,
  };
}

/** pino's error serializer with token-shaped text removed from message and stack. */
function redactedError(error: Error) {
  const out = pino.stdSerializers.err(error) as Record<string, unknown>;
  for (const key of ['message', 'stack']) if (typeof out[key] === 'string') out[key] = redactTokens(out[key] as string);
  return out;
}

/**
 * Logger options for a Fastify instance: whatever the caller set, plus serializers that never
 * write a token. `false`/`true` pass through (tests run silent; `true` gets the serializers too).
 */
export function redactingLogger<T>(logger: T): T | Record<string, unknown> {
  if (logger === false || logger === undefined || logger === null) return logger;
  const base = (typeof logger === 'object' ? logger : {}) as Record<string, unknown> & { serializers?: Record<string, unknown> };
  return { ...base, serializers: { ...base.serializers, req: redactedRequest, err: redactedError } };
}
