import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../../http/types.js';
import { AppError, badRequest, tooLarge } from '../../errors/app-error.js';
import { ingestLimits } from './limits.js';

/**
 * What the HTTP ingest routes share (native ingest, ../native; OTLP, ../otlp; the Loki push API,
 * ../loki; Elasticsearch's bulk API, ../elastic): their scope reads the raw
 * body itself (gzip, the 10 MB limit after decompression), the handler picks the
 * decoder by the media type and turns the decoder's errors into ours (bad data 400, over a limit
 * 413 with native ingest's limit), and an onSend hook gives error answers the protocol's shape.
 */

/** Reads the raw (possibly gzip) body, stopping at the limit measured after decompression. */
export function readBody(request: { headers: Record<string, string | string[] | undefined> }, payload: Readable, done: (error: Error | null, body?: Buffer) => void): void {
  const limit = ingestLimits.bodyBytes;
  const encoding = String(request.headers['content-encoding'] ?? 'identity').toLowerCase();
  let source: Readable = payload;
  if (encoding === 'gzip' || encoding === 'x-gzip') source = payload.pipe(zlib.createGunzip());
  else if (encoding !== 'identity') return done(new AppError('unsupported_type', `Content-Encoding ${encoding} is not accepted; use gzip`));
  else if (Number(request.headers['content-length'] ?? 0) > limit) {
    payload.resume();
    return done(tooLarge(limit, `the request body may be at most ${limit} bytes`));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (error: Error | null, body?: Buffer) => {
    if (finished) return;
    finished = true;
    done(error, body);
  };
  source.on('data', (chunk: Buffer) => {
    if (finished) return;
    size += chunk.length;
    if (size > limit) {
      if (source !== payload) payload.unpipe();
      payload.resume();
      finish(tooLarge(limit, `the request body may be at most ${limit} bytes after decompression`));
      return;
    }
    chunks.push(chunk);
  });
  source.on('end', () => finish(null, Buffer.concat(chunks, size)));
  source.on('error', () => finish(badRequest(source === payload ? 'the request body could not be read' : 'the gzip body is corrupt')));
}

/** The request's media type without its parameters, in lower case; '' when it has none. */
export const mediaType = (request: FastifyRequest): string => String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** The Content-Encoding header as the routes document it (readBody decides). */
export const contentEncodingHeader = Type.Optional(
  Type.Union([Type.Literal('gzip'), Type.Literal('identity')], { description: 'gzip: the body is gzip-compressed (limits apply after decompression).' }),
);

/** The error envelope the error handler writes (DECISIONS §5): `{error: {code, message, request_id, …}}`. */
export interface ErrorEnvelope {
  code?: unknown;
  message?: unknown;
  request_id?: unknown;
  [key: string]: unknown;
}

/**
 * Sets `scope` to read every body of the `types` given (or of any type, '*'; without a
 * Content-Type too) as a Buffer with readBody, and, when `rewrite` is given, to pass each error
 * answer's envelope to it: what it returns (having set the answer's type) replaces the body,
 * undefined keeps it. Status and headers stay (Retry-After…).
 */
export function rawBodyScope(
  scope: Api,
  types: readonly string[] | '*',
  rewrite?: (error: ErrorEnvelope, request: FastifyRequest, reply: FastifyReply) => string | Buffer | undefined,
): void {
  scope.removeAllContentTypeParsers();
  for (const type of types === '*' ? ['*'] : types) {
    scope.addContentTypeParser(type, (request, payload, done) => readBody(request, payload, done as (e: Error | null, b?: Buffer) => void));
  }
  if (!rewrite) return;
  scope.addHook('onSend', (request, reply, payload, done: (error: null, payload?: unknown) => void) => {
    if (reply.statusCode < 400 || typeof payload !== 'string') return done(null, payload);
    let error: unknown;
    try {
      error = (JSON.parse(payload) as { error?: unknown } | null)?.error;
    } catch {
      return done(null, payload);
    }
    if (typeof error !== 'object' || error === null) return done(null, payload);
    done(null, rewrite(error as ErrorEnvelope, request, reply) ?? payload);
  });
}

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Runs a decoder, its errors in our vocabulary: an instance of one of `bad` is a 400 with its
 * message, of `over` a 413 (native ingest's body limit) with its message; anything else is thrown as it is.
 */
export function decodeWith<T>(decode: () => T, errors: { bad: readonly ErrorClass[]; over: readonly ErrorClass[] }): T {
  try {
    return decode();
  } catch (error) {
    if (errors.bad.some((type) => error instanceof type)) throw badRequest((error as Error).message);
    if (errors.over.some((type) => error instanceof type)) throw tooLarge(ingestLimits.bodyBytes, (error as Error).message);
    throw error;
  }
}
