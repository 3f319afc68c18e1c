import type { Origin } from './origin.js';

/** Data written with a test token is visible only to test tokens, and live only to live. */
export type Mode = 'live' | 'test';

/**
 * Who a request acts for. Derived from the API token only (never from the request), and
 * a required argument of every store method that reads or writes tenant data.
 */
export interface Tenant {
  readonly orgId: string;
  readonly projectId: string;
  readonly mode: Mode;
  /**
   * Who acts, from where (src/audit): set for each API request by the auth plugin, so every
   * service handed the tenant records its changes with their actor and request. Absent for
   * opsctl and background jobs, which record the operator. Never part of the tenant's identity
   * (tenantKey, scoped rows).
   */
  readonly origin?: Origin;
}

/**
 * The tenant as one string, for maps and for binding cursors to their tenant. Org and
 * project ids are ULIDs and the mode a word, so `/` cannot occur inside a part. Cursors
 * signed before embed this text: changing it would invalidate every outstanding cursor.
 */
export const tenantKey = (tenant: Tenant): string => `${tenant.orgId}/${tenant.projectId}/${tenant.mode}`;

/**
 * The tenant without who acts: what may leave the request (a message on the bus, a call to the
 * events node), so no request's origin travels to other processes.
 */
export const tenantOnly = (tenant: Tenant): Tenant => ({ orgId: tenant.orgId, projectId: tenant.projectId, mode: tenant.mode });
