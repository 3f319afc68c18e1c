import type { FastifyInstance } from 'fastify';
import type { Api } from '../http/types.js';

/** A capability adds its /v1 routes through one of these. */
export type RouteRegistrar = (v1: Api) => void | Promise<void>;

/** A capability that serves public content on the delivery listener. */
export type DeliveryRegistrar = (cdn: FastifyInstance) => void | Promise<void>;

/**
 * Reachability checks of the stores a capability needs, by the name /readyz shows them under
 * (`events`, `blobs`): each rejects while its store cannot serve, and /readyz then answers 503.
 */
export type Readiness = Readonly<Record<string, () => Promise<void>>>;

/**
 * What a capability's `open(deps, options)` returns. Each is an entry of the module table
 * (src/modules.ts) naming what it needs; server.ts opens them in order, hands the parts to the
 * two listeners and runs the lifecycle below; opsctl opens only what a command needs. A
 * capability has the parts it has.
 *
 * Lifecycle: open → routes registered → listeners bound → start → … → stop → listeners
 * closed → close.
 */
export interface Capability {
  /** Names its share of `opsctl purge`'s result. */
  readonly name: string;
  /** Its /v1 routes. */
  readonly routes?: RouteRegistrar;
  /** Its routes outside /v1 (/readyz, /dashboard/…), registered in a plugin of their own. */
  readonly root?: RouteRegistrar;
  /** Its public routes on the delivery listener. */
  readonly delivery?: DeliveryRegistrar;
  /** Its stores' checks, by name: one that rejects makes /readyz answer 503. */
  readonly readiness?: Readiness;
  /** Starts its background jobs, once both listeners are bound. */
  readonly start?: () => void;
  /** Stops its background jobs and ends its long-lived responses (live tail), before the listeners close. */
  readonly stop?: () => Promise<void>;
  /** Its purge, run now (what its background job runs); the result is its share of `opsctl purge`. */
  readonly purge?: () => Promise<object>;
  /** Releases what open() took (the event store), after the listeners closed. */
  readonly close?: () => Promise<void>;
}
