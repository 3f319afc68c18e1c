import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { storeUnavailable, type MediaService } from './media-service.js';
import { BlobStoreUnavailableError } from '../stores/blobs/blob-store.js';
import { contentDisposition, storageKeyPattern } from './names.js';
import { parseRange } from './range.js';
import { AppError } from '../errors/app-error.js';
import { errorBody, sendError } from '../errors/error-handler.js';

/** The envelope like every other error; never cached, so a file restored later is served. */
const notFound = (request: FastifyRequest, reply: FastifyReply) =>
  sendError(request, reply.header('cache-control', 'no-store'), new AppError('not_found', 'no file at this address (never uploaded, purged or blocked)'));

/** True when an If-None-Match list names this ETag (weak comparison, RFC 9110 §13.1.2). */
const matches = (header: string | undefined, etag: string) =>
  header !== undefined && (header.trim() === '*' || header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag));

/**
 * Public GET/HEAD of `{cdn_url}/{key}` (DECISIONS.md §7). The key must have the exact shape
 * uploads produce and name a record: the path never reaches the file system, and a
 * soft-deleted file is served until its purge while a blocked one is not.
 */
export function registerDelivery(cdn: FastifyInstance, media: MediaService): void {
  const handler = async (request: FastifyRequest<{ Params: { token: string; name: string } }>, reply: FastifyReply) => {
    const key = `${request.params.token}/${request.params.name}`;
    if (!storageKeyPattern.test(key)) return notFound(request, reply);
    const row = await media.files.byKeyForDelivery(key);
    if (!row || row.abuse_status === 'blocked') return notFound(request, reply);
    const size = Number(row.size);
    const etag = `"${row.sha256}"`;
    reply.headers({
      etag,
      'cache-control': 'public, max-age=31536000, immutable',
      'accept-ranges': 'bytes',
      'x-content-type-options': 'nosniff',
      'content-disposition': contentDisposition(row.original_name),
      'last-modified': new Date(row.created_at).toUTCString(),
    });
    if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    const ifRange = request.headers['if-range'];
    const range = ifRange === undefined || ifRange === etag ? parseRange(request.headers.range, size) : ({ kind: 'none' } as const);
    if (range.kind === 'unsatisfiable') {
      // 416 with Content-Range is what range clients (video players) act on; the body is the envelope.
      reply.header('content-range', `bytes */${size}`).removeHeader('content-disposition');
      const error = new AppError('bad_request', `range not satisfiable: the file has ${size} bytes`);
      return reply.code(416).type('application/json; charset=utf-8').send(errorBody(error, request.id));
    }
    const part = range.kind === 'range' ? range.range : undefined;
    reply.type(row.content_type).header('content-length', part ? part.end - part.start + 1 : size);
    if (part) reply.code(206).header('content-range', `bytes ${part.start}-${part.end}/${size}`);
    if (request.method === 'HEAD') return reply.send();
    const fileHeaders = ['etag', 'cache-control', 'accept-ranges', 'content-disposition', 'last-modified', 'content-length', 'content-range'];
    let body;
    try {
      body = await media.blobs.get(row.key, part);
    } catch (error) {
      if (!(error instanceof BlobStoreUnavailableError)) throw error;
      // The error envelope, not the file's headers: never cached, retried after Retry-After.
      for (const name of fileHeaders) reply.removeHeader(name);
      reply.code(503).header('cache-control', 'no-store');
      throw storeUnavailable(error, 'the file cannot be read now');
    }
    // A record whose blob is gone is mid-purge: the same answer as after the purge.
    if (!body) {
      for (const name of fileHeaders) reply.removeHeader(name);
      return notFound(request, reply.code(404));
    }
    return reply.send(body);
  };
  // HEAD is ours rather than Fastify's automatic one, which would open and read the blob.
  cdn.route({ method: ['GET', 'HEAD'], url: '/:token/:name', exposeHeadRoute: false, handler });
}
