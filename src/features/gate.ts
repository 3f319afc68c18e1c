import { AppError } from '../errors/app-error.js';
import type { AppContext } from '../app/context.js';
import type { Api } from '../http/types.js';
import { ownOnRequest } from '../http/route-hooks.js';

/** The announced resources an installation switches on with OPS_FEATURES (DECISIONS.md §13). */
export type Feature = 'logs' | 'cases' | 'apps';

/**
 * Registers a feature's routes in their own scope behind a gate. The routes always exist
 * (so the OpenAPI document shows them with their scope); switched off, each answers
 * 501 not_implemented. The gate is appended to each route's own onRequest hooks, after the
 * authentication step the auth plugin puts first (401, then 403 for the scope), and before
 * the body is read or validated.
 */
export async function registerGated(v1: Api, ctx: AppContext, feature: Feature, register: (scope: Api) => void): Promise<void> {
  await v1.register(async (scope: Api) => {
    const gate = async () => {
      if (!ctx.config.features.has(feature)) {
        throw new AppError(
          'not_implemented',
          `${feature} endpoints are announced but not released on this installation (enable them with OPS_FEATURES=${feature})`,
        );
      }
    };
    scope.addHook('onRoute', (route) => {
      route.onRequest = [...ownOnRequest(route), gate];
    });
    register(scope);
  });
}
