import type { RouteRegistrar } from './build-api.js';
import type { DeliveryRegistrar } from '../delivery/build-cdn.js';
import type { AppContext } from './context.js';
import { mediaCapability } from '../media/capability.js';
import { eventsCapability } from '../datasets/capability.js';
import { queryCapability } from '../query/routes.js';
import { tailCapability } from '../tail/capability.js';
import { announcedCapability } from '../features/capability.js';

/**
 * The capabilities beyond the foundation, in one list: each adds its /v1 routes, its
 * delivery routes and background jobs. A new capability is one entry here.
 */
export interface Capability {
  name: string;
  routes?: RouteRegistrar;
  delivery?: DeliveryRegistrar;
  /** Starts background work; returns its stop function (awaited on shutdown). */
  background?: (ctx: AppContext) => () => Promise<void>;
  readiness?: (ctx: AppContext) => Promise<void>;
  /** The capability's share of `opsctl purge` (and of its own background job). */
  purge?: (ctx: AppContext) => Promise<Record<string, unknown>>;
}

export const capabilities: Capability[] = [mediaCapability, eventsCapability, queryCapability, tailCapability, announcedCapability];
