import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyError } from 'fastify';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { badRequest, tooLarge } from '../../errors/app-error.js';
import type { MediaService } from '../media-service.js';
import { checkFolder, checkTags } from '../fields.js';
import { base64Limits, fileLimit } from '../limits.js';
import { decodeBase64Payload } from '../base64.js';
import { answerInCommit } from '../../idempotency/index.js';

const Body = Type.Object(
  {
    filename: Type.Optional(Type.String({ maxLength: 1024 })),
    content_type: Type.Optional(Type.String({ maxLength: 255 })),
    data: Type.Optional(Type.String({ description: 'form A: base64 of the bytes, or a data: URL' })),
    file: Type.Optional(Type.String({ description: 'form B: base64 of the bytes, or a data: URL' })),
    folder: Type.Optional(Type.String({ maxLength: 256 })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20 })),
  },
  { description: 'form A: {filename, content_type, data}; form B: {file, filename}' },
);

/** POST /media/base64 for clients that cannot send multipart (SPEC.md §4.1 forms A and B). */
export async function registerBase64Upload(app: Api, ctx: AppContext, media: MediaService): Promise<void> {
  // This scope's own handler turns the body limit into too_large naming *this* route's limit.
  app.setErrorHandler((error: FastifyError) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw tooLarge(base64Limits.rawBodyBytes);
    throw error;
  });

  app.post(
    '/media/base64',
    {
      bodyLimit: base64Limits.rawBodyBytes,
      config: { scope: 'media:write', idempotency: 'body' },
      schema: { tags: ['media'], summary: 'Upload a file as base64 JSON (forms A and B, data: URLs)', body: Body, response: { 201: Type.Ref('File') } },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const { filename, content_type, data, file, folder, tags } = request.body;
      if (data !== undefined && file !== undefined) throw badRequest('send either data (form A) or file (form B), not both');
      const encoded = data ?? file;
      if (encoded === undefined) throw badRequest('missing required field: data (form A) or file (form B)');
      if (!filename) throw badRequest('missing required field: filename');
      const payload = decodeBase64Payload(encoded);
      let declared = content_type ?? payload.mediaType;
      if (content_type && payload.mediaType && content_type.toLowerCase() !== payload.mediaType.toLowerCase()) {
        throw badRequest(`content_type ${content_type} contradicts the data: URL's ${payload.mediaType}`);
      }
      if (data !== undefined && !declared) throw badRequest('missing required field: content_type (form A)');
      if (declared === '') declared = undefined;
      const type = declared === undefined ? undefined : media.checkDeclared(declared);
      const limit = Math.min(base64Limits.decodedBytes, fileLimit(ctx.plans, auth.plan, type));
      if (payload.bytes.length > limit) throw tooLarge(limit, `decoded file exceeds maximum allowed size of ${limit} bytes`);
      const stored = await media.store({
        tenant: auth.tenant,
        plan: auth.plan,
        declaredType: type,
        originalName: filename,
        body: Readable.from([payload.bytes]),
        sizeHint: payload.bytes.length,
        oversizeCode: 'too_large',
      });
      try {
        return reply.code(201).send(await stored.commit({ folder: checkFolder(folder), tags: checkTags(tags ?? []) }, await answerInCommit(request, 201)));
      } catch (error) {
        await stored.abort();
        throw error;
      }
    },
  );
}
