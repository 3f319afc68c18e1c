// The Media page's other requests, one hook each: delete (DELETE /v1/media/{id}), restore (POST
// /v1/media/{id}/restore), and the plan's name for upload errors (GET /v1/usage).
import { api, data } from '../../api/client';

export function useDeleteFile() {
  return (id: string) => data(api.DELETE('/v1/media/{id}', { params: { path: { id } } }));
}

export function useRestoreFile() {
  return (id: string) => data(api.POST('/v1/media/{id}/restore', { params: { path: { id } } }));
}

export function usePlanName(): () => Promise<string> {
  return async () => (await data(api.GET('/v1/usage', {}))).plan;
}
