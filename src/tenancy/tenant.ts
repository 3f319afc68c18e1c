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
}
