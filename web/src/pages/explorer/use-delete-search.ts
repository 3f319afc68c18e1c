// Deletes a saved search (DELETE /v1/searches/{id}, logs:write). The API keeps no author: any
// member whose role writes logs may delete the project's saved searches, as they may save them.
import { api, data } from '../../api/client';

export function useDeleteSearch(): (id: string) => Promise<void> {
  return async (id) => {
    await data(api.DELETE('/v1/searches/{id}', { params: { path: { id } } }));
  };
}
