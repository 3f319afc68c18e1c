/** Metadata tables of single sign-on (migrations 0015-sso and 0020-sso-domain-verification, docs/sso.md). */
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

/**
 * An e-mail domain (lower case) in one organisation's settings (migration 0020): it routes
 * sign-ins to that organisation's provider once verified; several organisations may name a
 * domain, one at most holds it verified (a unique index over verified rows).
 */
export interface SsoEmailDomainsTable {
  org_id: string;
  domain: string;
  /** The random part of the TXT record's value, given when the domain entered the settings. */
  token: string;
  created_at: string;
  /** When the TXT record was found; null until then. */
  verified_at: string | null;
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
    sso_email_domains: SsoEmailDomainsTable;
    sso_logins: SsoLoginsTable;
  }
}
