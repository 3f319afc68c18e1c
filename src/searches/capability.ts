import type { AppContext } from '../app/context.js';
import type { Capability } from '../kernel/capability.js';
import { SavedSearchService } from './search-service.js';
import { SavedSearchSchema } from './routes/schemas.js';
import { registerSearchRoutes } from './routes/searches.js';

export interface SearchesCapability extends Capability {
  searches: SavedSearchService;
}

/** Saved searches (DECISIONS.md §19, docs/saved-searches.md): CRUD per project and mode. */
export function openSearches({ ctx }: { ctx: AppContext }): SearchesCapability {
  const searches = new SavedSearchService(ctx.metadata.db, ctx.clock);
  return {
    name: 'searches',
    searches,
    routes: (v1) => {
      v1.addSchema(SavedSearchSchema);
      registerSearchRoutes(v1, ctx, searches);
    },
  };
}
