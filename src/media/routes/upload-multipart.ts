import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { AppError, badRequest } from '../../errors/app-error.js';
import { watchFilePartHeaders } from '../part-headers.js';
import { malformedMultipart } from '../multipart-errors.js';
import { checkFolder, checkTags } from '../fields.js';
import type { MediaService, StoredFile } from '../media-service.js';
import type { IncomingMessage } from 'node:http';
import { answerInCommit } from '../../idempotency/index.js';

/** How long the rest of a refused body is read and dropped before the connection is cut. */
const lingerMs = 2000;

/**
 * The client may still be sending (an oversize file). The answer goes out now; the rest of
 * the body is read and discarded for a short while rather than the socket closed at once,
 * because closing on unread data makes the kernel send RST, which can destroy the answer
 * before the client reads it. A client still sending after `lingerMs` is cut off.
 */
function lingerThenClose(raw: IncomingMessage): void {
  raw.unpipe();
  raw.resume();
  const timer = setTimeout(() => raw.socket?.destroy(), lingerMs);
  timer.unref();
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
}

/** POST /media: one `file` part streamed to storage, with `folder` and `tags` fields. */
export async function registerMultipartUpload(app: Api, media: MediaService): Promise<void> {
  // Sizes are enforced by our own counter (limits.ts) so the answer names the right limit;
  // busboy's own limits only bound the small fields and the number of parts.
  await app.register(multipart, { limits: { fileSize: Number.MAX_SAFE_INTEGER, fieldSize: 4096, fields: 30, parts: 40, headerPairs: 50 } });

  app.post(
    '/media',
    {
      config: { scope: 'media:write', idempotency: 'stream' },
      schema: {
        tags: ['media'],
        summary: 'Upload a file (multipart/form-data: part `file`, fields `folder`, `tags`)',
        consumes: ['multipart/form-data'],
        // Documented only: the parts are streamed and checked by the handler, never by Ajv.
        unvalidated: {
          body: Type.Object({
            file: Type.String({ format: 'binary', description: 'The file; the part must declare its Content-Type (e.g. image/png).' }),
            folder: Type.Optional(Type.String({ maxLength: 256, description: 'Folder to file it under.' })),
            tags: Type.Optional(
              Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 20 })], {
                description: 'Tags: repeat the field, or send one comma-separated list (at most 20, each 1 to 64 characters).',
              }),
            ),
          }),
        },
        response: { 201: Type.Ref('File') },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      if (!request.isMultipart()) throw new AppError('unsupported_type', 'POST /media takes multipart/form-data; use POST /media/base64 for JSON', { declared: null, detected: null });
      const headers = watchFilePartHeaders(request.raw);
      const length = Number(request.headers['content-length']);
      let stored: StoredFile | undefined;
      let folder: string | undefined;
      const tags: string[] = [];
      let sawPart = false;
      try {
        for await (const part of request.parts()) {
          sawPart = true;
          if (part.type === 'field') {
            if (part.fieldname === 'folder') folder = String(part.value);
            else if (part.fieldname === 'tags') tags.push(String(part.value));
            continue;
          }
          if (part.fieldname !== 'file' || stored) {
            part.file.resume();
            throw badRequest(stored ? 'only one file part is allowed' : `unexpected file part "${part.fieldname}": the file part must be named file`);
          }
          if (headers.hadContentType() === false) {
            part.file.resume();
            throw badRequest('the file part must declare a Content-Type (e.g. image/png)');
          }
          stored = await media.store({
            tenant: auth.tenant,
            plan: auth.plan,
            declaredType: part.mimetype,
            originalName: part.filename || 'file',
            body: part.file,
            sizeHint: Number.isSafeInteger(length) && length > 0 ? length : undefined,
            oversizeCode: 'file_too_large',
          });
        }
        if (!stored) throw badRequest('missing required field: the multipart body has no part named file');
        const view = await stored.commit({ folder: checkFolder(folder), tags: checkTags(tags) }, await answerInCommit(request, 201));
        return reply.code(201).send(view);
      } catch (error) {
        await stored?.abort();
        if (!request.raw.complete) lingerThenClose(request.raw);
        throw malformedMultipart(error, sawPart) ?? error;
      }
    },
  );
}
