import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, storageError } from './app-error.js';
import type { ErrorCode } from './codes.js';
import { redactTokens } from '../http/redact.js';
import { newId } from '../shared/ids.js';
import { BlobStoreUnavailableError, EventStoreBehindError, EventStoreResourceError, EventStoreUnavailableError } from './store-errors.js';

/** The body of DECISIONS.md §5, serialised here so no route's response schema can fail it. */
export function errorBody(error: AppError, requestId: string): string {
  return redactTokens(JSON.stringify({ error: { code: error.code, message: error.message, ...error.extra, request_id: requestId } }));
}

/** Renders an AppError as DECISIONS.md §5's body, with its headers. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  // A string payload skips the route's serializer, and a serializer the handler chose for its
  // success answer (reply.serializer) is dropped: an error answer cannot fail to serialise.
  (reply as unknown as { serializer(fn: null): void }).serializer(null);
  return reply.code(error.status).type('application/json; charset=utf-8').send(errorBody(error, request.id));
}

type ValidationItem = { keyword?: string; instancePath?: string; message?: string; params?: Record<string, unknown> };

/** `/a/0/b` (Ajv's JSON pointer) → `a[0].b`, the way a person names a field. */
function fieldName(pointer: string | undefined): string {
  if (!pointer) return '';
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

/**
 * The values a field takes when its schema is a list of them: an `enum`, or a union of literals
 * (TypeBox's `Union([Literal…])`, which Ajv reports as one "must be equal to constant" per
 * branch). `"a", "b" or "c"`, so the answer says what to send instead of naming a keyword.
 */
function allowedValues(items: ValidationItem[], first: ValidationItem): string | undefined {
  let values: unknown[] = [];
  if (first.keyword === 'enum' && Array.isArray(first.params?.allowedValues)) values = first.params.allowedValues as unknown[];
  else if (first.keyword === 'const') {
    values = items.filter((v) => v.keyword === 'const' && v.instancePath === first.instancePath).map((v) => v.params?.allowedValue);
  }
  if (values.length === 0) return undefined;
  const shown = values.map((v) => JSON.stringify(v));
  return shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`;
}

function validationError(items: ValidationItem[], context: string | undefined): AppError {
  const where = context ?? 'request';
  const unknown = items.find((v) => v.keyword === 'additionalProperties');
  if (unknown) {
    const parent = fieldName(unknown.instancePath);
    const field = `${parent ? `${parent}.` : ''}${String(unknown.params?.additionalProperty)}`;
    return new AppError('bad_request', `invalid ${where}: unknown field "${field}"; see this endpoint in /v1/openapi.json for the fields it takes`, { field });
  }
  const first = items[0] ?? {};
  const missing = first.keyword === 'required' ? String(first.params?.missingProperty ?? '') : '';
  const parent = fieldName(first.instancePath);
  // `field` names the field as the service's own checks do (monitors, channels…), so a form can
  // put the message beside it whichever layer refused the value.
  if (missing) {
    const field = `${parent ? `${parent}.` : ''}${missing}`;
    return new AppError('bad_request', `invalid ${where}: field "${field}" is required`, { field });
  }
  const named = parent ? `field "${parent}"` : `the ${where}`;
  const extra = parent ? { field: parent } : {};
  const allowed = allowedValues(items, first);
  if (allowed) return new AppError('bad_request', `invalid ${where}: ${named} must be one of ${allowed}`, extra);
  return new AppError('bad_request', `invalid ${where}: ${named} ${first.message ?? 'is not valid'}`, extra);
}

/** The content types a route takes, for a 415 a person can act on. */
function acceptedTypes(request: FastifyRequest): string {
  const consumes = (request.routeOptions?.schema as { consumes?: string[] } | undefined)?.consumes;
  return (consumes?.length ? consumes : ['application/json']).join(', ');
}

/** Fastify's own failures (body parsing, validation, limits) in our vocabulary. */
function translate(error: FastifyError & { validation?: ValidationItem[]; validationContext?: string }, request: FastifyRequest): AppError | undefined {
  if (error.validation) return validationError(error.validation, error.validationContext);
  // Any read the event store could not fit in its memory even alone (POST /query words its own).
  if (error instanceof EventStoreResourceError) {
    return new AppError('bad_request', 'the request needs more memory than one request may use on the event store; narrow it (a shorter time range, more conditions)');
  }
  // Read-your-writes waited its bound for the loader: the events are safe, the answer is late.
  if (error instanceof EventStoreBehindError) return Object.assign(storageError(`${error.message}; retry in a moment`, 1), { cause: error });
  if (error instanceof EventStoreUnavailableError) return Object.assign(storageError('the event store is unavailable; acknowledged events are kept and load when it is back', 5), { cause: error });
  // Media call sites word their own; this is the net under any path that does not.
  if (error instanceof BlobStoreUnavailableError) return Object.assign(storageError(`the file store is unavailable (${error.reason}); retry shortly`, 5), { cause: error });
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || (error.statusCode === 415 && !(error instanceof AppError))) {
    const declared = request.headers['content-type'];
    return new AppError(
      'unsupported_type',
      `${declared ? `content type "${declared}" is` : 'a body without a Content-Type is'} not supported by ${request.method} ${request.url.split('?')[0]}; send ${acceptedTypes(request)}`,
    );
  }
  const byCode: Record<string, [ErrorCode, string]> = {
    FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'the request body is not valid JSON'],
    FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 'the request body is empty; send a JSON object'],
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'the Content-Length header does not match the body'],
    FST_ERR_CTP_BODY_TOO_LARGE: ['too_large', 'request body exceeds the maximum allowed size'],
    FST_ERR_BAD_URL: ['bad_request', 'the URL is not valid (a malformed %-escape?)'],
    FST_ERR_MAX_PARAM_LENGTH: ['bad_request', 'a path segment of the URL is too long'],
    FST_ERR_CTP_INVALID_CONTENT_TYPE: ['bad_request', 'the Content-Type header is malformed'],
  };
  const known = error.code ? byCode[error.code] : undefined;
  if (known) return new AppError(known[0], known[1]);
  if (error instanceof SyntaxError) return new AppError('bad_request', 'the request body is not valid JSON');
  const status = error.statusCode ?? 500;
  if (status === 413) return new AppError('too_large', 'request body exceeds the maximum allowed size');
  if (status === 404) return new AppError('not_found', 'resource not found');
  if (status >= 400 && status < 500) return new AppError('bad_request', error.message || 'the request is malformed');
  return undefined;
}

/**
 * A client that went away mid-request (closed the socket, reset it) is ordinary client
 * behaviour, not a server fault: it is logged as one line at info, never as an error.
 */
function clientWentAway(error: { code?: string; message?: string }, request: FastifyRequest): boolean {
  const codes = ['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNABORTED', 'FST_ERR_REP_ALREADY_SENT'];
  return (error.code !== undefined && codes.includes(error.code)) || error.message === 'aborted' || request.raw.destroyed;
}

export interface ErrorHandlerOptions {
  /** Body limit of the instance, reported as `limit` on too_large. */
  bodyLimit: number;
  /** The not_found message for an unknown path (default: `no endpoint METHOD /path`). */
  notFound?: string;
}

/** Logs one failure at the level it deserves: only a fault of ours (500, 503) is an error with a stack. */
function logFailure(request: FastifyRequest, cause: unknown, answered: AppError | undefined): void {
  const error = cause as { code?: string; message?: string };
  if (clientWentAway(error, request)) {
    request.log.info({ code: error.code }, `client went away before the answer: ${redactTokens(String(error.message))}`);
  } else if (!answered) {
    request.log.error({ err: cause }, 'unhandled error');
  } else if (answered.code === 'internal' || answered.code === 'storage_error') {
    request.log.error({ err: cause }, answered.message);
  } else if (answered.status >= 500) {
    request.log.info({ code: answered.code }, answered.message);
  }
}

export function installErrorHandling(app: FastifyInstance, options: ErrorHandlerOptions): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    let appError = error instanceof AppError ? error : translate(error, request);
    if (appError && appError.code === 'too_large' && appError.extra.limit === undefined) {
      appError = new AppError('too_large', appError.message, { limit: options.bodyLimit });
    }
    logFailure(request, error, appError);
    return sendError(request, reply, appError ?? new AppError('internal', 'an unexpected error occurred'));
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new AppError('not_found', options.notFound ?? `no endpoint ${request.method} ${request.url.split('?')[0]}`)),
  );
}

/**
 * Fastify options that route the framework's own early failures (a malformed URL, a request
 * line or headers over Node's 16 KB, a request that timed out, a request during shutdown)
 * through the same envelope as every other error.
 */
export function envelopeOptions(limits: { maxHeaderBytes: number }) {
  return {
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const appError = translate(error, request) ?? new AppError('bad_request', 'the request is malformed');
      request.log.info({ code: error.code }, appError.message);
      // These run before any onRequest hook, which is where X-Request-Id is set otherwise.
      reply.header('X-Request-Id', request.id);
      sendError(request, reply, appError);
    },
    clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Socket) {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      // Statuses follow DECISIONS.md §5's table (too_large is 413, not HTTP's 431; a timeout is
      // a bad_request 400, not 408), so a client switches on one code–status pairing everywhere.
      let appError: AppError;
      if (error.code === 'HPE_HEADER_OVERFLOW') {
        appError = new AppError('too_large', `the request line and headers exceed ${limits.maxHeaderBytes} bytes; send long values in the body`, { limit: limits.maxHeaderBytes });
      } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        appError = new AppError('bad_request', 'the request was not received in time; the connection is closed');
      } else {
        appError = new AppError('bad_request', 'the request is not valid HTTP/1.1');
      }
      this.log.info({ code: error.code }, `client error: ${appError.message}`);
      if (socket.writable) {
        const body = errorBody(appError, newId.request());
        socket.write(
          `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
            `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
  };
}

/**
 * While the server closes, requests still arriving on kept-alive connections get 503
 * storage_error with Retry-After in the envelope (Fastify's own return503OnClosing answers
 * outside it).
 */
export function answer503WhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    reply.header('Connection', 'close');
    sendError(request, reply, new AppError('storage_error', 'the server is shutting down; retry on another connection', {}, { 'Retry-After': '1' }));
  });
}
