import os from 'node:os';
import { newId } from '../shared/ids.js';

/** Who made a change (DECISIONS.md §20): a member signed in to the dashboard, an API token, or an operator with opsctl. */
export type ActorType = 'user' | 'token' | 'operator';

export interface Actor {
  readonly type: ActorType;
  /** usr_… for a user, tok_… for a token, the operating-system account for an operator. */
  readonly id: string;
  readonly name: string;
}

/**
 * Who acts, and from where: what every audit entry records besides the change itself. It rides
 * with the Tenant (tenancy/tenant.ts) — the auth plugin puts it there for each request — so a
 * service that is handed the tenant records who acted without a parameter of its own.
 */
export interface Origin {
  readonly actor: Actor;
  readonly requestId: string;
  /** The client's address as the socket saw it ('' for opsctl). */
  readonly ip: string;
  readonly userAgent: string;
}

/** User agents are the client's to choose: kept to this many characters. */
const maxUserAgent = 256;

export const boundedUserAgent = (value: string | undefined): string => (value ?? '').slice(0, maxUserAgent);

let operator: Origin | undefined;

/**
 * The origin of changes that carry none: `opsctl` commands and the background jobs of the server
 * (the purge). One request id per process, so the entries of one opsctl command share it.
 */
export function operatorOrigin(): Origin {
  if (!operator) {
    let account = 'operator';
    try {
      account = os.userInfo().username || account;
    } catch {
      // No passwd entry (some containers): the generic name.
    }
    operator = { actor: { type: 'operator', id: account, name: `opsctl (${account})` }, requestId: newId.request(), ip: '', userAgent: 'opsctl' };
  }
  return operator;
}

/** Where a request came from, before anyone is known to act (a sign-in attempt). */
export type RequestOrigin = Omit<Origin, 'actor'>;

/** The request id, client address and user agent of a Fastify request. */
export const requestOrigin = (request: { id: string; ip: string; headers: { 'user-agent'?: string } }): RequestOrigin => ({
  requestId: request.id,
  ip: request.ip,
  userAgent: boundedUserAgent(request.headers['user-agent']),
});
