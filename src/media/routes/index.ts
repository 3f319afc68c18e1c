import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { FileSchema, ListedFileSchema } from '../schemas.js';
import type { MediaService } from '../media-service.js';
import { registerMultipartUpload } from './upload-multipart.js';
import { registerBase64Upload } from './upload-base64.js';
import { registerManageRoutes } from './manage.js';

/** The /v1/media routes; each upload in its own scope for its plugin or error handler. */
export async function registerMediaRoutes(v1: Api, ctx: AppContext, media: MediaService): Promise<void> {
  v1.addSchema(FileSchema);
  v1.addSchema(ListedFileSchema);
  await v1.register(async (scope: Api) => registerMultipartUpload(scope, media));
  await v1.register(async (scope: Api) => registerBase64Upload(scope, ctx, media));
  registerManageRoutes(v1, ctx, media);
}
