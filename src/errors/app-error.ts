import { errorStatus, type ErrorCode } from './codes.js';

/** Extra fields rendered beside code and message in the error body. */
export type ErrorExtra = Record<string, unknown>;

/**
 * The one error type handlers throw. Its status comes from the code table, so a handler
 * cannot pair a code with the wrong status.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: ErrorExtra;
  /** Response headers that belong to this error (Retry-After, WWW-Authenticate…). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, extra: ErrorExtra = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = errorStatus[code];
    this.extra = extra;
    this.headers = headers;
  }
}

export const badRequest = (message: string, extra?: ErrorExtra) => new AppError('bad_request', message, extra);
export const notFound = (message = 'resource not found') => new AppError('not_found', message);
export const conflict = (message: string, extra?: ErrorExtra) => new AppError('conflict', message, extra);
export const forbidden = (message: string, extra?: ErrorExtra) => new AppError('forbidden', message, extra);
export const unauthorized = (message = 'missing or invalid authorization token') =>
  new AppError('unauthorized', message, {}, { 'WWW-Authenticate': 'Bearer' });
export const storageError = (message = 'failed to write to storage', retryAfterSeconds = 1) =>
  new AppError('storage_error', message, {}, { 'Retry-After': String(retryAfterSeconds) });
export const tooLarge = (limit: number, message = 'request body exceeds the maximum allowed size') =>
  new AppError('too_large', message, { limit });
