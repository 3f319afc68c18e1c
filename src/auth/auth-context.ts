import type { Tenant } from '../tenancy/tenant.js';
import type { Scope } from './scopes.js';
import type { ActingMember } from './role-policy.js';
import type { Actor } from '../tenancy/origin.js';

/** What an authenticated request acts as; set once by the auth plugin. */
export interface AuthContext {
  tenant: Tenant;
  tokenId: string;
  scopes: ReadonlySet<Scope>;
  /** The organisation's plan at the time of the request. */
  plan: string;
  /**
   * The member the token acts for: the user behind a dashboard session token, or who created
   * the token with one (api_tokens.created_by_user_id), with their role in the token's
   * organisation as read with the token; absent for tokens made with opsctl or another API
   * token. What it changes: src/auth/role-policy.ts.
   */
  member?: ActingMember;
  /**
   * Who the audit log names for the request's changes: the user behind a dashboard session
   * token, else the token itself (src/tenancy/origin.ts).
   */
  actor: Actor;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route needs. Every /v1 route declares one, or `public: true`. */
    scope?: Scope;
    public?: boolean;
  }
  interface FastifyRequest {
    /** Set by the auth plugin on every route with a scope; read it with `requireAuth`. */
    auth?: AuthContext;
  }
}
