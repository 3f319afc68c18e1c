/**
 * Every error code the API can answer with, and its HTTP status (DECISIONS.md §5).
 * One table: handlers throw `AppError`s by code, the error handler renders them.
 */
export const errorStatus = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  file_too_large: 413,
  unsupported_type: 415,
  tier_upgrade_required: 402,
  quota_exceeded: 402,
  tail_session_limit_exceeded: 429,
  rate_limited: 429,
  soql_parse_error: 400,
  soql_reserved_field: 400,
  soql_tail_aggregation_unsupported: 400,
  not_implemented: 501,
  internal: 500,
  storage_error: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export const errorCodes = Object.keys(errorStatus) as ErrorCode[];
