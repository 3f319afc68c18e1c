import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { PageQuery } from '../../pagination/page.js';
import { tenantKey } from '../../tenancy/tenant.js';
import { DateTime } from '../../http/schemas.js';
import type { MediaService } from '../media-service.js';
import { sharedView, toView, type FileView } from '../file-record.js';
import { FileId, ListedFileSchema } from '../schemas.js';
import type { FastifyReply } from 'fastify';
import { iso } from '../../shared/clock.js';

const ListQuery = Type.Composite([
  PageQuery,
  Type.Object({
    folder: Type.Optional(Type.String({ maxLength: 256, description: 'only files in this folder' })),
    tag: Type.Optional(Type.String({ maxLength: 64, description: 'only files carrying this tag' })),
    deleted: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'true: the soft-deleted files still inside their 30-day window instead (restorable with POST /media/{id}/restore), newest deletion first, each with deleted, deleted_at and purges_at',
      }),
    ),
  }),
]);

/** The JSON text of each shared view (sharedView) of GET /media's active list, written once. */
const viewTexts = new WeakMap<FileView, string>();

/** GET /media, GET /media/{id}, DELETE /media/{id}, POST /media/{id}/restore. */
export function registerManageRoutes(app: Api, ctx: AppContext, media: MediaService): void {
  app.get(
    '/media',
    {
      config: { scope: 'media:read' },
      schema: {
        tags: ['media'],
        summary: 'List active files of this project, newest first; with deleted=true, its soft-deleted files, newest deletion first',
        querystring: ListQuery,
        response: { 200: Type.Object({ files: Type.Array(Type.Ref('ListedFile')), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request, reply) => {
      const { tenant } = requireAuth(request);
      const { folder, tag, deleted } = request.query;
      // The filter is part of the list's identity: a cursor of one filter is refused by another.
      const filter = JSON.stringify([folder ?? null, tag ?? null]);
      const owner = tenantKey(tenant);
      if (deleted) {
        const list = `media:deleted:${filter}`;
        const page = ctx.paginator.request(request.query, list, owner);
        const rows = await media.files.listDeleted(tenant, page, { folder, tag }, iso(ctx.clock.now()));
        const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, list, owner, (r) => [r.deleted_at!, r.id]);
        const files = items.map((r) => ({ ...toView(r, media.urls.cdn), deleted: true as const, deleted_at: r.deleted_at!, purges_at: r.purges_at! }));
        return { files, next_cursor: nextCursor, has_more: hasMore };
      }
      const list = `media:${filter}`;
      const page = ctx.paginator.request(request.query, list, owner);
      const rows = await media.files.list(tenant, page, { folder, tag });
      const cdnUrl = media.urls.cdn;
      // The active list is shared until anything is written (read-mostly): its page's bytes are
      // kept with it (Paginator.pageBytes), so a repeated list is answered without being written.
      const body = ctx.paginator.pageBytes(
        rows,
        page,
        list,
        owner,
        (r) => [r.created_at, r.id],
        ({ items, nextCursor, hasMore }) => {
          // Each shared view is serialised once (Fastify's serializer of the item schema, as the
          // route's would write it inside the list) and its text kept with it: a page made anew
          // after a write to another file writes only the files that changed.
          const serialize = (reply as FastifyReply).compileSerializationSchema(ListedFileSchema) as unknown as (view: FileView) => string;
          const texts = items.map((r) => {
            const view = sharedView(r, cdnUrl);
            let text = viewTexts.get(view);
            if (text === undefined) viewTexts.set(view, (text = serialize(view)));
            return text;
          });
          // The route schema's object, written out: what its serializer would write.
          return `{"files":[${texts.join(',')}],"next_cursor":${JSON.stringify(nextCursor)},"has_more":${hasMore}}`;
        },
        cdnUrl,
      );
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(body);
    },
  );

  app.get(
    '/media/:id',
    {
      config: { scope: 'media:read' },
      schema: { tags: ['media'], summary: 'One active file', params: FileId, response: { 200: Type.Ref('File') } },
    },
    async (request) => media.get(requireAuth(request).tenant, request.params.id),
  );

  app.delete(
    '/media/:id',
    {
      config: { scope: 'media:write' },
      schema: {
        tags: ['media'],
        summary: 'Soft-delete a file (its URL keeps working until purges_at)',
        params: FileId,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true), purges_at: DateTime('when permanent removal happens') }) },
      },
    },
    async (request) => media.softDelete(requireAuth(request).tenant, request.params.id),
  );

  app.post(
    '/media/:id/restore',
    {
      config: { scope: 'media:write' },
      schema: {
        tags: ['media'],
        summary: 'Restore a soft-deleted file within its 30-day window (an active file is answered as it is)',
        description:
          'Undoes DELETE /media/{id} while the file is inside its window: it is back in GET /media and GET /media/{id}, and is not purged. Restoring an active file changes nothing and answers it too, so a retry is safe. 404 for an unknown id, another project\'s file, or one past its window. Storage usage is unchanged: a soft-deleted file counts until it is purged.',
        params: FileId,
        response: { 200: Type.Ref('File') },
      },
    },
    async (request) => media.restore(requireAuth(request).tenant, request.params.id),
  );
}
