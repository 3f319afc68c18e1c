import type { Command } from '../app/command.js';
import { badRequest } from '../errors/app-error.js';
import { PublicUrls } from '../kernel/public-urls.js';
import { cliLogger } from '../kernel/cli-logger.js';

/**
 * `opsctl media restore`: recovery of a soft-deleted file (SPEC.md §3.1) by an operator, whichever
 * tenant's it is; the web dashboard restores through POST /v1/media/{id}/restore, tenant-scoped.
 */
export const mediaCommands: Command[] = [
  {
    name: 'media restore',
    summary:
      'Bring a soft-deleted file back within its recovery window; prints the File, its url under OPS_CDN_URL (default http://localhost:OPS_CDN_PORT).',
    options: { id: { type: 'string', value: 'FILE_ID', required: true, description: 'file id (f_…) of a file deleted less than the window ago' } },
    async run(ctx, flags, io) {
      const id = flags.id;
      if (typeof id !== 'string' || !/^f_[0-9A-Z]{26}$/.test(id)) throw badRequest('--id must be a file id (f_ + ULID)');
      // The server uses the port it bound when the address is unset; opsctl cannot know that port.
      if (!ctx.config.cdnUrl) {
        io.err('opsctl: warning: OPS_CDN_PORT is 0 and OPS_CDN_URL is unset: the url printed is relative to the delivery address; set OPS_CDN_URL to the address files are delivered from');
      }
      // Loaded here: every other opsctl command starts faster without the media modules.
      const { openMedia } = await import('./capability.js');
      return openMedia({ ctx, log: cliLogger(ctx.config), urls: new PublicUrls(ctx.config) }).service.restoreAnyTenant(id);
    },
  },
];
