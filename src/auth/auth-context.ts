import type { Tenant } from '../tenancy/tenant.js';
import type { Scope } from './scopes.js';

/** What an authenticated request acts as; set once by the auth plugin. */
export interface AuthContext {
  tenant: Tenant;
  tokenId: string;
  scopes: ReadonlySet<Scope>;
  /** The organisation's plan at the time of the request. */
  plan: string;
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
