// The Tokens page's writes, one hook a request: create (POST /v1/tokens), revoke (DELETE /v1/tokens/{id}).
import { api, data } from '../../api/client';
import type { paths } from '../../api/schema';
import type { Created } from './token-rules';

type CreateBody = paths['/v1/tokens']['post']['requestBody']['content']['application/json'];

export function useCreateToken(): (body: CreateBody) => Promise<Created> {
  return (body) => data(api.POST('/v1/tokens', { body }));
}

export function useRevokeToken(): (id: string) => Promise<void> {
  return async (id) => void (await data(api.DELETE('/v1/tokens/{id}', { params: { path: { id } } })));
}
