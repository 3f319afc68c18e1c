// One dataset's schema (GET /v1/datasets/{name}/schema): payload keys, built-in fields.
import { useEffect, useState } from 'preact/hooks';
import { api, data } from '../../api/client';

const loadSchema = (name: string) => data(api.GET('/v1/datasets/{name}/schema', { params: { path: { name } } }));
export type Schema = Awaited<ReturnType<typeof loadSchema>>;

export function useDatasetSchema(name: string): { schema: Schema | undefined; error: unknown } {
  const [schema, setSchema] = useState<Schema>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let current = true;
    loadSchema(name).then(
      (s) => current && setSchema(s),
      (e: unknown) => current && setError(e),
    );
    return () => void (current = false);
  }, [name]);
  return { schema, error };
}
