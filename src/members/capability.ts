import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import { registerMemberRoutes } from './routes.js';
import { registerMemberInviteRoute } from './invite.js';

/** Members of an organisation and their roles (SPEC.md §4.6, DECISIONS.md §17): list, invite, change, remove. */
export function openMembers({ ctx }: { ctx: AppContext }): Capability {
  return {
    name: 'members',
    routes: (v1) => {
      registerMemberRoutes(v1, ctx);
      registerMemberInviteRoute(v1, ctx);
    },
  };
}
