import type { AppContext } from '../../app/context.js';
import type { Capability } from '../../app/capability.js';
import type { EventsRuntime } from '../../events/runtime.js';
import { registerOtlpLogsRoute } from './routes/logs.js';

/** OTLP/HTTP logs ingest (DECISIONS §15): POST /v1/otlp/v1/logs, onto the events capability's write path. */
export function openOtlp(ctx: AppContext, events: EventsRuntime): Capability {
  return { name: 'otlp', routes: (v1) => registerOtlpLogsRoute(v1, ctx, events) };
}
