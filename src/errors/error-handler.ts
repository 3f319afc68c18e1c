import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './app-error.js';
import type { ErrorCode } from './codes.js';

/** Renders an AppError as DECISIONS.md §5's body, with its headers. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send({ error: { code: error.code, message: error.message, ...error.extra, request_id: request.id } });
}

/** Fastify's own failures (body parsing, validation, limits) in our vocabulary. */
function translate(
  error: FastifyError & { validation?: Array<{ keyword?: string; instancePath?: string; params?: { additionalProperty?: unknown } }>; validationContext?: string },
): AppError | undefined {
  if (error.validation) {
    const where = error.validationContext ? `${error.validationContext}` : 'request';
    const unknown = error.validation.find((v) => v.keyword === 'additionalProperties');
    if (unknown) {
      const field = `${unknown.instancePath ? `${unknown.instancePath.slice(1).replaceAll('/', '.')}.` : ''}${String(unknown.params?.additionalProperty)}`;
      return new AppError('bad_request', `invalid ${where}: unknown field "${field}"; see this endpoint in /v1/openapi.json for the fields it takes`);
    }
    return new AppError('bad_request', `invalid ${where}: ${error.message.replace(/^(body|querystring|params|headers)\/?/, '$1 ')}`);
  }
  const byCode: Record<string, [ErrorCode, string]> = {
    FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'the request body is not valid JSON'],
    FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 'the request body is empty; send a JSON object'],
    FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_type', 'content type not supported by this endpoint'],
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'the Content-Length header does not match the body'],
    FST_ERR_CTP_BODY_TOO_LARGE: ['too_large', 'request body exceeds the maximum allowed size'],
  };
  const known = error.code ? byCode[error.code] : undefined;
  if (known) return new AppError(known[0], known[1]);
  if (error instanceof SyntaxError) return new AppError('bad_request', 'the request body is not valid JSON');
  const status = error.statusCode ?? 500;
  if (status === 413) return new AppError('too_large', 'request body exceeds the maximum allowed size');
  if (status === 415) return new AppError('unsupported_type', 'content type not supported by this endpoint');
  if (status === 404) return new AppError('not_found', 'resource not found');
  if (status >= 400 && status < 500) return new AppError('bad_request', error.message || 'the request is malformed');
  return undefined;
}

export interface ErrorHandlerOptions {
  /** Body limit of the instance, reported as `limit` on too_large. */
  bodyLimit: number;
}

export function installErrorHandling(app: FastifyInstance, options: ErrorHandlerOptions): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    let appError = error instanceof AppError ? error : translate(error);
    if (appError && appError.code === 'too_large' && appError.extra.limit === undefined) {
      appError = new AppError('too_large', appError.message, { limit: options.bodyLimit });
    }
    if (!appError) {
      request.log.error({ err: error }, 'unhandled error');
      appError = new AppError('internal', 'an unexpected error occurred');
    } else if (appError.status >= 500) {
      request.log.error({ err: error }, appError.message);
    }
    return sendError(request, reply, appError);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new AppError('not_found', `no endpoint ${request.method} ${request.url.split('?')[0]}`)),
  );
}
