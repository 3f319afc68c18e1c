// The SSO page's writes, one hook a request: save (PUT /v1/orgs/{orgId}/sso), turn off (DELETE),
// test the saved configuration (POST …/sso/test), verify a domain (POST …/sso/domains/{domain}/verify).
import { api, data } from '../../api/client';
import type { paths } from '../../api/schema';
import { useSession } from '../../session';
import type { SsoConfig, SsoDomain } from './use-sso-config';

export type SsoInput = paths['/v1/orgs/{orgId}/sso']['put']['requestBody']['content']['application/json'];
export type SsoTestReport = paths['/v1/orgs/{orgId}/sso/test']['post']['responses']['200']['content']['application/json'];

export function useSaveSso(): (body: SsoInput) => Promise<SsoConfig> {
  const { target } = useSession();
  return (body) => data(api.PUT('/v1/orgs/{orgId}/sso', { params: { path: { orgId: target.org_id } }, body }));
}

export function useRemoveSso(): () => Promise<void> {
  const { target } = useSession();
  return async () => void (await data(api.DELETE('/v1/orgs/{orgId}/sso', { params: { path: { orgId: target.org_id } } })));
}

export function useTestSso(): () => Promise<SsoTestReport> {
  const { target } = useSession();
  return () => data(api.POST('/v1/orgs/{orgId}/sso/test', { params: { path: { orgId: target.org_id } } }));
}

export function useVerifySsoDomain(): (domain: string) => Promise<SsoDomain> {
  const { target } = useSession();
  return (domain) => data(api.POST('/v1/orgs/{orgId}/sso/domains/{domain}/verify', { params: { path: { orgId: target.org_id, domain } } }));
}
