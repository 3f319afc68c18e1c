import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../../http/types.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { forbidden } from '../../errors/app-error.js';
import { Ok } from '../../http/schemas.js';
import { ownerRole } from '../../auth/system-roles.js';
import type { SsoService } from '../sso-service.js';
import { DomainParams, OrgParams, PutSsoBody, SsoConfigSchema, SsoDomainSchema, SsoTestReportSchema } from './schemas.js';
import { checkOrg } from '../../auth/role-policy.js';

const tags = ['sso'];

/**
 * The organisation of the path, if the caller may manage its single sign-on: members:write
 * (the route's scope), the token's organisation, and, for a token acting for a member (the
 * dashboard's), an Owner. Tokens acting for nobody (opsctl's) keep members:write's rule, as
 * for members (role-policy.ts).
 */
function ownerOrg(request: FastifyRequest<{ Params: { orgId: string } }>): string {
  const { tenant, member } = requireAuth(request);
  checkOrg(tenant.orgId, request.params.orgId);
  if (member && member.role !== ownerRole) {
    throw forbidden(`only an Owner can manage single sign-on (this token acts for ${member.role ? `a member whose role is ${member.role}` : 'a user who is no longer a member'}): ask an Owner`);
  }
  return tenant.orgId;
}

/** PUT/GET/DELETE /orgs/{orgId}/sso, POST /orgs/{orgId}/sso/test and …/sso/domains/{domain}/verify (DECISIONS.md §22). */
export function registerSsoConfigRoutes(v1: Api, sso: SsoService): void {
  v1.addSchema(SsoDomainSchema);
  v1.addSchema(SsoConfigSchema);

  v1.put(
    '/orgs/:orgId/sso',
    {
      config: { scope: 'members:write' },
      schema: {
        tags,
        operationId: 'putSso',
        summary: "Configure the organisation's single sign-on (OpenID Connect); Owner only",
        description:
          "The issuer's discovery document and its keys (jwks_uri) are fetched and checked before anything is saved (400 naming `issuer` with the call that failed and why, never quoting the provider's answer). Private, loopback and metadata addresses are refused unless the server allows them (OPS_OUTBOUND_ALLOW_PRIVATE). Each e-mail domain is answered with its state: a new one is unverified and routes nobody until its DNS TXT record is verified (POST …/sso/domains/{domain}/verify); one kept from the saved settings keeps its token and verification. A domain another organisation has verified → 409.",
        params: OrgParams,
        body: PutSsoBody,
        response: { 200: Type.Ref(SsoConfigSchema) },
      },
    },
    async (request) => sso.view(await sso.configure(ownerOrg(request), request.body, requireAuth(request).tenant)),
  );

  v1.get(
    '/orgs/:orgId/sso',
    {
      config: { scope: 'members:write' },
      schema: { tags, operationId: 'getSso', summary: "The organisation's single sign-on configuration (secret masked); Owner only", params: OrgParams, response: { 200: Type.Ref(SsoConfigSchema) } },
    },
    async (request) => sso.view(await sso.get(ownerOrg(request))),
  );

  v1.delete(
    '/orgs/:orgId/sso',
    {
      config: { scope: 'members:write' },
      schema: { tags, operationId: 'deleteSso', summary: 'Turn single sign-on off (members sign in with passwords again); Owner only', params: OrgParams, response: { 200: Ok } },
    },
    async (request) => {
      await sso.remove(ownerOrg(request), requireAuth(request).tenant);
      return { ok: true as const };
    },
  );

  v1.post(
    '/orgs/:orgId/sso/domains/:domain/verify',
    {
      config: { scope: 'members:write' },
      schema: {
        tags,
        operationId: 'verifySsoDomain',
        summary: "Verify an e-mail domain of the organisation's single sign-on by its DNS TXT record; Owner only",
        description:
          'Looks up the TXT records at the `dns_record.name` GET shows (`_opsplatform.<domain>`); one must hold `dns_record.value`. Found → 200 with the domain verified (an already verified domain answers as it is). No record, or none holding the token → 400 naming the record looked up. The DNS look-up failing (timeout, SERVFAIL) → 503 with Retry-After. Another organisation verified the domain first → 409. A domain not in the settings → 404.',
        params: DomainParams,
        response: { 200: Type.Ref(SsoDomainSchema) },
      },
    },
    async (request) => sso.verifyDomain(ownerOrg(request), request.params.domain, requireAuth(request).tenant),
  );

  v1.post(
    '/orgs/:orgId/sso/test',
    {
      config: { scope: 'members:write' },
      schema: {
        tags,
        operationId: 'testSso',
        summary: "Test the saved configuration: fetch the provider's discovery document and keys again and say what was found; Owner only",
        description: 'Answers 200 whether the provider passed or not: `ok` and `problems` say which.',
        params: OrgParams,
        response: { 200: SsoTestReportSchema },
      },
    },
    async (request) => sso.test(ownerOrg(request)),
  );
}
