import { Type } from '@sinclair/typebox';
import { DateTime } from '../../http/schemas.js';
import { maxEmailDomains } from '../sso-config.js';

export const OrgParams = Type.Object({ orgId: Type.String({ maxLength: 64 }) });

export const DomainParams = Type.Object({
  orgId: Type.String({ maxLength: 64 }),
  domain: Type.String({ minLength: 1, maxLength: 253, description: 'one of the organisation\'s email_domains, e.g. studio.example' }),
});

export const PutSsoBody = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: 500, description: "the provider's Issuer Identifier (https; http only on localhost); its discovery document must answer" }),
    client_id: Type.String({ minLength: 1, maxLength: 500 }),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'required the first time; absent on a change: the stored one is kept' })),
    email_domains: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
      minItems: 1,
      maxItems: maxEmailDomains,
      description:
        "members whose e-mail is in one of these domains sign in through this provider once the domain is verified (POST …/sso/domains/{domain}/verify); a domain kept from the saved settings keeps its token and verification, a new one starts unverified",
    }),
    default_role: Type.String({ minLength: 1, maxLength: 100, description: 'the role of a member created on first sign-in (Admin, Developer, Viewer…; never Owner)' }),
    enforce: Type.Optional(Type.Boolean({ description: 'true: password sign-in refused for members, except the primary owner (default false)' })),
  },
  { additionalProperties: false },
);

export const SsoDomainSchema = Type.Object(
  {
    domain: Type.String({ description: 'lower case, e.g. studio.example' }),
    verified: Type.Boolean({ description: 'true once its DNS TXT record was found: only a verified domain routes "Sign in with SSO" and signs members up' }),
    verified_at: Type.Optional(DateTime('present once verified')),
    dns_record: Type.Optional(
      Type.Object(
        {
          type: Type.Literal('TXT'),
          name: Type.String({ description: '_opsplatform.<domain>' }),
          value: Type.String({ description: 'opsplatform-domain-verification=<token>; the token is this organisation\'s for this domain, the same until the domain leaves the settings' }),
        },
        { description: 'present until verified: the record to publish at the domain\'s DNS provider' },
      ),
    ),
  },
  { $id: 'SsoDomain' },
);

export const SsoConfigSchema = Type.Object(
  {
    issuer: Type.String(),
    client_id: Type.String(),
    client_secret: Type.String({ description: 'always masked' }),
    email_domains: Type.Array(Type.Ref(SsoDomainSchema), { description: 'in the order of their names' }),
    default_role: Type.String(),
    enforce: Type.Boolean(),
    callback_url: Type.String({ description: "the redirect URI to register at the provider: OPS_PUBLIC_URL + /dashboard/sso/callback" }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'SsoConfig' },
);

export const SsoTestReportSchema = Type.Object({
  ok: Type.Boolean({ description: 'true when discovery and the keys were fetched and nothing is missing' }),
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  jwks_uri: Type.String(),
  keys: Type.Array(Type.Object({ kid: Type.String(), kty: Type.String(), alg: Type.String(), use: Type.String() })),
  id_token_signing_alg_values_supported: Type.Array(Type.String()),
  problems: Type.Array(Type.String(), { description: 'what failed or is missing, in words' }),
});
