import type { FastifyReply, FastifyRequest } from 'fastify';

/** The Elasticsearch version GET / reports: clients that read it (Vector, Filebeat, Logstash) take the 8.x API. */
export const reportedVersion = '8.17.0';

/** GET / of Elasticsearch: enough for clients that check the product and the version to proceed. */
export function clusterInfo() {
  return {
    name: 'opsplatform',
    cluster_name: 'opsplatform',
    cluster_uuid: 'opsplatform',
    version: {
      number: reportedVersion,
      build_flavor: 'default',
      build_type: 'opsplatform',
      build_hash: 'opsplatform',
      build_date: '2026-01-01T00:00:00.000Z',
      build_snapshot: false,
      lucene_version: '9.12.0',
      minimum_wire_compatibility_version: '7.17.0',
      minimum_index_compatibility_version: '7.0.0',
    },
    tagline: 'You Know, for Search',
  };
}

/** Our error codes (DECISIONS §5) → the `type` Elasticsearch gives a failure of that kind. */
const errorTypes: Record<string, string> = {
  bad_request: 'parse_exception',
  unauthorized: 'security_exception',
  forbidden: 'security_exception',
  not_found: 'resource_not_found_exception',
  conflict: 'index_closed_exception',
  too_large: 'content_too_long_exception',
  unsupported_type: 'media_type_header_exception',
  quota_exceeded: 'cluster_block_exception',
  rate_limited: 'es_rejected_execution_exception',
  storage_error: 'unavailable_shards_exception',
  internal: 'exception',
};

/** Elasticsearch's error body: `{error: {root_cause: [{type, reason}], type, reason}, status}`. */
export function elasticError(status: number, type: string, reason: string, extra: Record<string, unknown> = {}) {
  return { error: { root_cause: [{ type, reason }], type, reason, ...extra }, status };
}

/**
 * Under /v1/elastic every answer carries `X-Elastic-Product: Elasticsearch` (the official
 * clients refuse a server without it), and an error envelope the error handler wrote (DECISIONS
 * §5) becomes Elasticsearch's error body with the same status and headers; our code and the
 * request id stay in it as `code` and `request_id`.
 */
export function elasticAnswers(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload?: unknown) => void): void {
  reply.header('X-Elastic-Product', 'Elasticsearch');
  if (reply.statusCode < 400 || typeof payload !== 'string') return done(null, payload);
  let error: ({ code?: string; message?: string } & Record<string, unknown>) | undefined;
  try {
    error = (JSON.parse(payload) as { error?: typeof error }).error;
  } catch {
    return done(null, payload);
  }
  if (!error || typeof error.code !== 'string' || 'root_cause' in error) return done(null, payload);
  const { code, message, ...extra } = error;
  done(null, JSON.stringify(elasticError(reply.statusCode, errorTypes[code] ?? 'exception', String(message), { code, ...extra })));
}
