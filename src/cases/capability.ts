import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import type { PublicUrls } from '../kernel/public-urls.js';
import { registerGated } from '../features/gate.js';
import { registerCaseRoutes } from './routes.js';

/**
 * Cases, with media files attached (DECISIONS.md §13), an announced resource: its routes always
 * exist (and are documented) and answer 501 unless OPS_FEATURES switches `cases` on. They use
 * the media File schema, so this capability is opened after media.
 */
export function openCases({ ctx, urls }: { ctx: AppContext; urls: PublicUrls }): Capability {
  return { name: 'cases', routes: (v1) => registerGated(v1, ctx, 'cases', (scope) => registerCaseRoutes(scope, ctx, urls)) };
}
