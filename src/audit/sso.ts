import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import { audit, type AuditChange } from './record.js';
import type { RequestOrigin } from '../tenancy/origin.js';

/**
 * The audit entries of single sign-on (DECISIONS.md §22), for src/sso to call inside the
 * transaction of the change: `sso.configure` when an Owner saves or deletes the configuration,
 * `sso.domain_verify` when one of its e-mail domains is verified, `sso.sign_in` for each sign-in
 * through the provider, refused ones included. Details never hold the client secret, a code, a
 * state, a nonce or a token.
 */
export function recordSsoConfigure(
  trx: Kysely<Database>,
  change: { tenant: Tenant; at: number; deleted?: boolean; issuer?: string; email_domains?: readonly string[]; enforce?: boolean; default_role?: string },
): Promise<void> {
  const { tenant, at, deleted = false, issuer, email_domains, enforce, default_role } = change;
  return audit.record(trx, {
    action: 'sso.configure',
    origin: tenant.origin,
    orgId: tenant.orgId,
    target: { type: 'sso', id: tenant.orgId },
    at,
    details: { deleted, issuer: issuer ?? null, email_domains: email_domains ?? [], enforce: enforce ?? null, default_role: default_role ?? null },
  });
}

/** An e-mail domain of the organisation verified by its DNS TXT record (the record's name, never its token). */
export function recordSsoDomainVerify(trx: Kysely<Database>, change: { tenant: Tenant; at: number; domain: string; record: string }): Promise<void> {
  const { tenant, at, domain, record } = change;
  return audit.record(trx, {
    action: 'sso.domain_verify',
    origin: tenant.origin,
    orgId: tenant.orgId,
    target: { type: 'sso_domain', id: domain },
    at,
    details: { domain, record },
  });
}

/**
 * One sign-in through the organisation's provider. `user`: the member signed in (or, refused,
 * the member the e-mail names, if any: the actor is then `{type: 'user', id: '', name: email}`).
 */
export function recordSsoSignIn(
  trx: Kysely<Database>,
  attempt: { orgId: string; request: RequestOrigin; at: number; email: string; user?: { id: string; name: string }; outcome: 'success' | 'failure'; reason?: string; created?: boolean },
): Promise<void> {
  const { orgId, request, at, email, user, outcome, reason, created } = attempt;
  return audit.record(trx, {
    action: 'sso.sign_in',
    origin: { ...request, actor: { type: 'user', id: user?.id ?? '', name: user?.name ?? email } },
    orgId,
    target: { type: 'user', id: user?.id ?? '' },
    at,
    outcome,
    details: { email, method: 'sso', ...(reason !== undefined ? { reason } : {}), ...(created !== undefined ? { created } : {}) },
  });
}

/** The entry of a successful sign-in through the provider, written with the session it opens (DashboardService.startSession sets its time). */
export function ssoSignedIn(request: RequestOrigin, user: { id: string; name: string; email: string }): Omit<AuditChange, 'orgId'> {
  return {
    action: 'sso.sign_in',
    origin: { ...request, actor: { type: 'user', id: user.id, name: user.name } },
    target: { type: 'user', id: user.id },
    at: 0,
    outcome: 'success',
    details: { email: user.email, method: 'sso' },
  };
}
