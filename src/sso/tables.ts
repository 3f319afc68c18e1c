/** Metadata tables of single sign-on (migration 0015-sso, docs/sso.md). */
export interface SsoConfigsTable {
  org_id: string;
  /** The provider's Issuer Identifier, as its discovery document states it. */
  issuer: string;
  client_id: string;
  /** Sent to the provider's token endpoint; never returned by the API (masked). */
  client_secret: string;
  /** The role a member created on first sign-in gets (a role name of the organisation, never Owner). */
  default_role: string;
  /** 1: password sign-in refused for the organisation's members except its primary owner. */
  enforce: number;
  created_at: string;
  updated_at: string;
}

/** An e-mail domain (lower case) that signs in through one organisation's provider. */
export interface SsoDomainsTable {
  domain: string;
  org_id: string;
}

/** A sign-in in flight: what the callback checks, deleted when used (single use) or expired. */
export interface SsoLoginsTable {
  state_hash: string;
  org_id: string;
  browser_hash: string;
  code_verifier: string;
  nonce: string;
  created_at: string;
  expires_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    sso_configs: SsoConfigsTable;
    sso_domains: SsoDomainsTable;
    sso_logins: SsoLoginsTable;
  }
}
