import crypto from 'node:crypto';
import { recordSsoConfigure, recordSsoDomainVerify, recordSsoSignIn } from '../audit/sso.js';
import type { RequestOrigin } from '../tenancy/origin.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { Kysely } from 'kysely';
import type * as client from 'openid-client';
import type { Database } from '../stores/metadata/schema.js';
import type { Clock } from '../shared/clock.js';
import { iso } from '../shared/clock.js';
import type { OrgService } from '../orgs/org-service.js';
import type { MembersService } from '../members/members-service.js';
import type { DashboardService } from '../dashboard/dashboard-service.js';
import type { DashboardUser } from '../dashboard/dashboard-store.js';
import { newSecret, sha256 } from '../dashboard/passwords.js';
import { AppError, badRequest, conflict, forbidden, notFound } from '../errors/app-error.js';
import { checkSsoConfig, domainOf, type SsoConfigInput } from './sso-config.js';
import { SsoStore, type StoredSsoConfig, type StoredSsoDomain } from './sso-store.js';
import { lookupTxt } from './domain-dns.js';
import type { SsoLoginsTable } from './tables.js';
import type { GuardOptions } from '../outbound/guarded-agent.js';
import type { ProviderClient } from './oidc.js';
import { ProviderError } from './provider-error.js';

/**
 * openid-client, undici and the code speaking to providers, loaded at the first use of single
 * sign-on: a server none of whose organisations configures it never loads them (a faster start,
 * a smaller heap).
 */
let oidcModule: Promise<typeof import('./oidc.js')> | undefined;
const oidc = () => (oidcModule ??= import('./oidc.js'));

const minute = 60_000;
/** How long a sign-in may stay at the provider before its state is refused. */
export const signInWindowMs = 10 * minute;
/** A provider's discovery (and the keys openid-client caches with it) is reused this long. */
const discoveryTtlMs = 10 * minute;
export const maskedSecret = '********';
/**
 * At most this many sign-ins of one organisation in flight: starting one needs no account, so
 * the rows an anonymous client can make are bounded (each expires after signInWindowMs).
 */
export const maxSignInsInFlight = 500;

/** The TXT record that proves an organisation holds a domain: published by it, looked up by us. */
export interface DnsRecordView {
  type: 'TXT';
  name: string;
  value: string;
}

/** An e-mail domain as GET shows it: verified, or the record to publish. */
export interface SsoDomainView {
  domain: string;
  verified: boolean;
  verified_at?: string;
  dns_record?: DnsRecordView;
}

/** The name the verification record is published at, under the domain itself. */
export const recordName = (domain: string): string => `_opsplatform.${domain}`;
/** What the record holds: a fixed prefix (so it reads for what it is among a domain's TXT records) and the token. */
export const recordValuePrefix = 'opsplatform-domain-verification=';

export function domainView(d: StoredSsoDomain): SsoDomainView {
  if (d.verified_at) return { domain: d.domain, verified: true, verified_at: d.verified_at };
  return { domain: d.domain, verified: false, dns_record: { type: 'TXT', name: recordName(d.domain), value: `${recordValuePrefix}${d.token}` } };
}

/** 128 random bits in hex: a DNS provider's form keeps it as typed whatever it does with case. */
const newDomainToken = (): string => crypto.randomBytes(16).toString('hex');

/** The configuration as GET shows it: never the client secret. */
export interface SsoConfigView {
  issuer: string;
  client_id: string;
  client_secret: string;
  email_domains: SsoDomainView[];
  default_role: string;
  enforce: boolean;
  callback_url: string;
  created_at: string;
  updated_at: string;
}

export interface SsoTestReport {
  ok: boolean;
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  keys: Array<{ kid: string; kty: string; alg: string; use: string }>;
  id_token_signing_alg_values_supported: string[];
  problems: string[];
}

export interface SsoDeps {
  db: Kysely<Database>;
  clock: Clock;
  orgs: Pick<OrgService, 'addMember'>;
  members: Pick<MembersService, 'roles'>;
  dashboard: Pick<DashboardService, 'userByEmail'>;
  /** The address the provider sends browsers back to: OPS_PUBLIC_URL + /dashboard/sso/callback. */
  callbackUrl: () => string;
  /** The outbound address policy every call to a provider goes through (OPS_OUTBOUND_ALLOW_PRIVATE). */
  outbound: GuardOptions;
  /** OPS_DNS_SERVERS: where domain verification looks its TXT records up (empty: the system's resolvers). */
  dnsServers: readonly string[];
}

/** A sign-in refused at the callback: the message the sign-in page shows. */
export const signInRefused = (message: string): AppError => forbidden(`single sign-on refused: ${message}`);

/**
 * Single sign-on with OpenID Connect (DECISIONS.md §22, docs/sso.md): an organisation's
 * provider configuration, and the sign-in from the e-mail to the session.
 */
export class SsoService {
  readonly store: SsoStore;
  private readonly discovered = new Map<string, { key: string; at: number; config: Promise<client.Configuration> }>();
  private providerCalls: Promise<ProviderClient> | undefined;

  constructor(private readonly deps: SsoDeps) {
    this.store = new SsoStore(deps.db);
  }

  private now(): number {
    return this.deps.clock.now();
  }

  /** The calls to providers and their guarded dispatcher, made at the first use. */
  private calls(): Promise<ProviderClient> {
    return (this.providerCalls ??= oidc().then(({ providerClient }) => providerClient(this.deps.outbound)));
  }

  /** Closes the dispatcher's connections to providers, if any was made. */
  async close(): Promise<void> {
    if (this.providerCalls) await (await this.providerCalls).close();
  }

  view(row: StoredSsoConfig): SsoConfigView {
    return {
      issuer: row.issuer,
      client_id: row.client_id,
      client_secret: maskedSecret,
      email_domains: row.email_domains.map(domainView),
      default_role: row.default_role,
      enforce: Number(row.enforce) === 1,
      callback_url: this.deps.callbackUrl(),
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  async get(orgId: string): Promise<StoredSsoConfig> {
    const row = await this.store.config(orgId);
    if (!row) throw notFound('single sign-on is not configured for this organisation (PUT /v1/orgs/{orgId}/sso configures it)');
    return row;
  }

  /**
   * Creates or replaces the configuration after checking every field and fetching the
   * issuer's discovery document (a provider that cannot be used is refused before it is
   * saved). Without client_secret, a change keeps the stored one.
   */
  async configure(orgId: string, input: SsoConfigInput, by: Tenant): Promise<StoredSsoConfig> {
    const roles = (await this.deps.members.roles(orgId)).map((r) => r.name);
    const checked = checkSsoConfig(input, roles);
    const existing = await this.store.config(orgId);
    const secret = checked.client_secret ?? existing?.client_secret;
    if (secret === undefined) throw badRequest('client_secret is required when single sign-on is first configured', { field: 'client_secret' });
    const taken = await this.store.verifiedElsewhere(orgId, checked.email_domains);
    if (taken) throw verifiedByAnother(taken, { field: 'email_domains' });
    const { missingForCodeFlow, describeProviderError, discoveryUrl } = await oidc();
    const calls = await this.calls();
    try {
      // The provider's keys too: a provider whose ID tokens could not be verified is no use.
      const config = await calls.discover(checked.issuer, checked.client_id, secret);
      const missing = missingForCodeFlow(config);
      if (missing.length) throw new ProviderError(`the discovery document (${discoveryUrl(checked.issuer)}) lacks what the authorization code flow needs: ${missing.join(', ')}`);
      const jwksUri = config.serverMetadata().jwks_uri!;
      if ((await calls.fetchKeys(jwksUri)).length === 0) throw new ProviderError(`the JWKS (${jwksUri}) publishes no keys: ID tokens could not be verified`);
    } catch (error) {
      throw badRequest(`issuer ${checked.issuer} cannot be used: ${describeProviderError(error)}`, { field: 'issuer' });
    }
    const now = iso(this.now());
    const row = {
      org_id: orgId,
      issuer: checked.issuer,
      client_id: checked.client_id,
      client_secret: secret,
      default_role: checked.default_role,
      enforce: checked.enforce ? 1 : 0,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
    // The audit entry (sso.configure, never the secret) in the save's transaction. A domain
    // another organisation verifies meanwhile is saved unverified: it routes nothing here, and
    // its verification is then refused (409).
    const { issuer, email_domains, enforce, default_role } = checked;
    await this.store.save(row, email_domains, newDomainToken, (trx) => recordSsoConfigure(trx, { tenant: by, at: this.now(), issuer, email_domains, enforce, default_role }));
    this.discovered.delete(orgId);
    return this.get(orgId);
  }

  /**
   * Verifies one of the organisation's e-mail domains: its TXT record at `_opsplatform.<domain>`
   * must hold the organisation's token for it. A domain already verified answers as it is (no
   * look-up: a verification is kept until the domain leaves the settings). Errors name the
   * record looked up and never repeat what DNS answered.
   */
  async verifyDomain(orgId: string, domain: string, by: Tenant): Promise<SsoDomainView> {
    const name = domain.trim().toLowerCase();
    const claim = await this.domainOf(orgId, name);
    if (claim.verified_at) return domainView(claim);
    if (await this.store.verifiedElsewhere(orgId, [name])) throw verifiedByAnother(name);
    const record = domainView(claim).dns_record!;
    if (record.name.length > 253) throw badRequest(`${name} is too long to hold a record at ${record.name} (a DNS name has at most 253 characters): it cannot be verified`);
    const answer = await lookupTxt(record.name, { servers: this.deps.dnsServers });
    if (answer.kind === 'failed') {
      throw new AppError('storage_error', `the DNS look-up of the TXT record at ${record.name} failed (${answer.reason}); try again in a minute`, {}, { 'Retry-After': '30' });
    }
    if (answer.kind === 'none') {
      throw badRequest(`no TXT record was found at ${record.name}: publish one there holding ${record.value} at your DNS provider, then verify again once it is served (a new record can take minutes to appear)`);
    }
    if (!answer.records.some((r) => r.trim() === record.value)) {
      const found = answer.records.length === 1 ? 'the TXT record found there does not hold' : `none of the ${answer.records.length} TXT records found there holds`;
      throw badRequest(`${record.name}: ${found} this organisation's token: the record's value must be exactly ${record.value}`);
    }
    try {
      await this.store.verify(orgId, name, iso(this.now()), (trx) => recordSsoDomainVerify(trx, { tenant: by, at: this.now(), domain: name, record: record.name }));
    } catch (error) {
      // Lost a race against another organisation's verification (the unique index over verified domains).
      if (await this.store.verifiedElsewhere(orgId, [name])) throw verifiedByAnother(name);
      throw error;
    }
    return domainView(await this.domainOf(orgId, name));
  }

  private async domainOf(orgId: string, domain: string): Promise<StoredSsoDomain> {
    const found = (await this.store.config(orgId))?.email_domains.find((d) => d.domain === domain);
    if (!found) throw notFound(`${domain} is not one of this organisation's single sign-on e-mail domains (PUT /v1/orgs/{orgId}/sso lists them)`);
    return found;
  }

  async remove(orgId: string, by: Tenant): Promise<void> {
    if (!(await this.store.remove(orgId, (trx) => recordSsoConfigure(trx, { tenant: by, at: this.now(), deleted: true })))) throw notFound('single sign-on is not configured for this organisation');
    this.discovered.delete(orgId);
  }

  /** "Test the configuration": discovery and the provider's keys fetched again, and what was found. */
  async test(orgId: string): Promise<SsoTestReport> {
    const row = await this.get(orgId);
    const report: SsoTestReport = { ok: false, issuer: row.issuer, authorization_endpoint: '', token_endpoint: '', jwks_uri: '', keys: [], id_token_signing_alg_values_supported: [], problems: [] };
    const { missingForCodeFlow, describeProviderError } = await oidc();
    const calls = await this.calls();
    let config: client.Configuration;
    try {
      config = await calls.discover(row.issuer, row.client_id, row.client_secret);
    } catch (error) {
      report.problems.push(describeProviderError(error));
      return report;
    }
    const metadata = config.serverMetadata();
    report.authorization_endpoint = metadata.authorization_endpoint ?? '';
    report.token_endpoint = metadata.token_endpoint ?? '';
    report.jwks_uri = metadata.jwks_uri ?? '';
    report.id_token_signing_alg_values_supported = metadata.id_token_signing_alg_values_supported ?? [];
    report.problems.push(...missingForCodeFlow(config).map((m) => `the discovery document lacks ${m}`));
    if (metadata.jwks_uri) {
      try {
        report.keys = await calls.fetchKeys(metadata.jwks_uri);
        if (report.keys.length === 0) report.problems.push(`the JWKS (${metadata.jwks_uri}) publishes no keys: ID tokens could not be verified`);
      } catch (error) {
        report.problems.push(describeProviderError(error));
      }
    }
    report.ok = report.problems.length === 0;
    return report;
  }

  /** The provider's configuration for an organisation, discovered once per configuration change and reused for a while. */
  private providerOf(row: StoredSsoConfig): Promise<client.Configuration> {
    const key = `${row.updated_at}|${row.issuer}|${row.client_id}`;
    const cached = this.discovered.get(row.org_id);
    if (cached && cached.key === key && this.now() - cached.at < discoveryTtlMs) return cached.config;
    const config = this.calls().then((calls) => calls.discover(row.issuer, row.client_id, row.client_secret));
    this.discovered.set(row.org_id, { key, at: this.now(), config });
    config.catch(() => this.discovered.delete(row.org_id));
    return config;
  }

  /**
   * "Sign in with SSO": the organisation that verified the e-mail's domain, a new sign-in in flight
   * (PKCE verifier, state, nonce, kept server-side, bound to this browser by the flow cookie's
   * secret) and the provider's address to send the browser to.
   */
  async begin(email: string): Promise<{ redirectUrl: string; browserSecret: string }> {
    const domain = domainOf(email.trim());
    if (!domain) throw badRequest(`"${email}" is not an e-mail address`, { field: 'email' });
    const orgId = await this.store.orgOfDomain(domain);
    const row = orgId ? await this.store.config(orgId) : undefined;
    if (!row) throw notFound(`no organisation signs in with single sign-on for ${domain}: sign in with your password`);
    const { describeProviderError, newAuthorization, authorizationUrl } = await oidc();
    let provider: client.Configuration;
    try {
      provider = await this.providerOf(row);
    } catch (error) {
      throw new AppError('storage_error', `your organisation's identity provider cannot be reached (${describeProviderError(error)}); try again later, or ask your primary owner`, {}, { 'Retry-After': '30' });
    }
    const now = this.now();
    if ((await this.store.loginsInFlight(row.org_id, iso(now))) >= maxSignInsInFlight) {
      throw new AppError('rate_limited', `too many single sign-ons of this organisation are in progress (at most ${maxSignInsInFlight} in ${signInWindowMs / minute} minutes); retry in a minute`, {}, { 'Retry-After': '60' });
    }
    const { codeVerifier, state, nonce } = newAuthorization();
    const browserSecret = newSecret();
    await this.store.createLogin({
      state_hash: sha256(state),
      org_id: row.org_id,
      browser_hash: sha256(browserSecret),
      code_verifier: codeVerifier,
      nonce,
      created_at: iso(now),
      expires_at: iso(now + signInWindowMs),
    });
    const url = await authorizationUrl(provider, { redirectUri: this.deps.callbackUrl(), codeVerifier, state, nonce, loginHint: email.trim() });
    return { redirectUrl: url.href, browserSecret };
  }

  /**
   * The provider sent the browser back: the sign-in in flight is taken (once), the code
   * redeemed and the ID token checked by openid-client, then the e-mail: verified, in an
   * allowed domain. The member is created on first sign-in with the default role. Throws
   * `signInRefused` errors whose messages the sign-in page shows.
   */
  async complete(query: string, browserSecret: string | undefined, request: RequestOrigin): Promise<DashboardUser> {
    const callback = new URL(this.deps.callbackUrl());
    callback.search = query;
    const state = callback.searchParams.get('state');
    // Before the sign-in in flight is found, no organisation is known to record a refusal in.
    if (!state) throw signInRefused('the provider sent the browser back without a state: start again with "Sign in with SSO"');
    const login = await this.store.takeLogin(sha256(state));
    if (!login) throw signInRefused('this sign-in was already used or has expired (an unknown or replayed state): start again with "Sign in with SSO"');
    let email = '';
    try {
      return await this.completeLogin(login, callback, state, browserSecret, (known) => (email = known));
    } catch (error) {
      // A refusal in a known organisation is an audit entry of its own (DECISIONS §20: "and refused ones").
      if (error instanceof AppError && error.status === 403) {
        await recordSsoSignIn(this.deps.db, { orgId: login.org_id, request, at: this.now(), email, outcome: 'failure', reason: error.message });
      }
      throw error;
    }
  }

  private async completeLogin(login: SsoLoginsTable, callback: URL, state: string, browserSecret: string | undefined, learned: (email: string) => void): Promise<DashboardUser> {
    if (Date.parse(login.expires_at) <= this.now()) throw signInRefused(`this sign-in took longer than ${signInWindowMs / minute} minutes at the provider: start again with "Sign in with SSO"`);
    if (!browserSecret || sha256(browserSecret) !== login.browser_hash) {
      throw signInRefused('this sign-in was started in another browser (or its cookie is missing): start again with "Sign in with SSO" in this browser');
    }
    const row = await this.store.config(login.org_id);
    if (!row) throw signInRefused('single sign-on was turned off for this organisation during the sign-in');
    const { redeem, describeProviderError } = await oidc();
    let claims: client.IDToken;
    try {
      claims = await redeem(await this.providerOf(row), callback, { codeVerifier: login.code_verifier, state, nonce: login.nonce });
    } catch (error) {
      throw signInRefused(describeProviderError(error));
    }
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!email) throw signInRefused('the provider sent no e-mail address in the ID token (the client must be allowed the "email" scope)');
    learned(email);
    if (claims.email_verified !== true) throw signInRefused(`the provider has not verified the e-mail address ${email} (email_verified is not true)`);
    const domain = domainOf(email);
    // Only verified domains: an unverified one proves nothing about who holds its addresses.
    const allowed = row.email_domains.filter((d) => d.verified_at).map((d) => d.domain);
    if (!domain || !allowed.includes(domain)) {
      throw signInRefused(`${email} is not in a domain allowed to sign in to this organisation (allowed: ${allowed.join(', ') || 'none, no domain is verified'})`);
    }
    return this.memberFor(row, email, typeof claims.name === 'string' ? claims.name : undefined);
  }

  /**
   * The user behind a verified e-mail, made a member with the default role on first sign-in.
   * A session is the user's across organisations, so an organisation's provider signs in only
   * users who belong to no other organisation: otherwise whoever runs one organisation's
   * provider could sign in as a member of another.
   */
  private async memberFor(row: StoredSsoConfig, email: string, name: string | undefined): Promise<DashboardUser> {
    const existing = await this.deps.dashboard.userByEmail(email);
    if (existing && (await this.store.otherMemberships(existing.id, row.org_id)) > 0) {
      throw signInRefused(`${email} is also a member of another organisation, so this organisation's provider cannot sign it in: sign in with your password`);
    }
    try {
      await this.deps.orgs.addMember({ orgId: row.org_id, email, name: name?.trim().slice(0, 200) || undefined, role: row.default_role });
    } catch (error) {
      // Already a member (a returning user, or a concurrent first sign-in): keep their role.
      if (error instanceof AppError && error.code === 'bad_request') throw signInRefused(`the provider's e-mail address cannot be used: ${error.message}`);
      if (!(error instanceof AppError && error.code === 'conflict')) throw error;
    }
    const user = await this.deps.dashboard.userByEmail(email);
    if (!user) throw new AppError('internal', 'an unexpected error occurred');
    return user;
  }

  purge(): Promise<number> {
    return this.store.purge(iso(this.now()));
  }
}

const verifiedByAnother = (domain: string, extra?: { field: string }) =>
  conflict(`${extra ? 'email_domains: ' : ''}${domain} is verified by another organisation: its addresses sign in through that organisation's provider (a domain belongs to the one organisation that verified it)`, extra);
