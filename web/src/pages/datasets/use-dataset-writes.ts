// The Datasets page's writes, one hook a request: create (POST /v1/datasets), edit (PATCH
// /v1/datasets/{name}, only the fields changed), archive (DELETE /v1/datasets/{name}).
import { api, data } from '../../api/client';
import type { Severity, Summary } from './dataset-rules';

type Changes = { name?: string; retention_days?: number; default_severity?: Severity | null };

export function useCreateDataset(): (body: { name: string; retention_days?: number; default_severity?: Severity }) => Promise<Summary> {
  return (body) => data(api.POST('/v1/datasets', { body }));
}

export function useUpdateDataset(): (name: string, body: Changes) => Promise<Summary> {
  return (name, body) => data(api.PATCH('/v1/datasets/{name}', { params: { path: { name } }, body }));
}

export function useArchiveDataset(): (name: string) => Promise<void> {
  return async (name) => void (await data(api.DELETE('/v1/datasets/{name}', { params: { path: { name } } })));
}
