import type { Command } from '../cli/commands.js';
import { badRequest } from '../errors/app-error.js';
import { mediaOf } from './services.js';

/** `opsctl media restore`: the dashboard's recovery of a soft-deleted file (SPEC.md §3.1). */
export const mediaCommands: Command[] = [
  {
    name: 'media restore',
    usage: 'opsctl media restore --id f_… [--json]',
    options: { id: { type: 'string' } },
    async run(ctx, flags) {
      const id = flags.id;
      if (typeof id !== 'string' || !/^f_[0-9A-Z]{26}$/.test(id)) throw badRequest('--id must be a file id (f_ + ULID)');
      return mediaOf(ctx).restore(id);
    },
  },
];
