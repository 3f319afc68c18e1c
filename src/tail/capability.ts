import type { Capability } from '../app/capabilities.js';
import { registerTailRoute } from './routes/tail.js';
import { closeTailHub } from './hub-registry.js';

/** Live tail: POST /query/tail over Server-Sent Events (one entry in `capabilities`). */
export const tailCapability: Capability = {
  name: 'tail',
  routes: registerTailRoute,
  // Nothing runs in the background; the stop hook ends the open streams before the listeners close.
  background: (ctx) => () => closeTailHub(ctx),
};
