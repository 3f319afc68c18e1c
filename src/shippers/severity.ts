import { parseSeverity } from '../events/ingest-parse.js';
import { severities, type Severity } from '../engine/event-record.js';

/** Names shippers send beyond native ingest's (DECISIONS §21): syslog's and winston's npm levels. */
const extraNames: Record<string, Severity> = {
  notice: 'info',
  alert: 'fatal',
  http: 'info',
  verbose: 'debug',
  silly: 'debug',
};

/**
 * A level as a shipper or logging library sends it → our severity name; undefined when it is
 * not one we know (the event then takes the dataset's default, and the value stays in the
 * payload: a log line is never refused for its level). Numbers are pino's and bunyan's levels
 * (10 trace, 20 debug, 30 info, 40 warn, 50 error, 60 fatal; custom levels in between count
 * as the one below), not OpenTelemetry severity numbers: no shipper of these routes sends those.
 */
export function shipperSeverity(value: unknown): Severity | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 10) return undefined;
    if (value < 30) return 'debug';
    if (value < 40) return 'info';
    if (value < 50) return 'warn';
    if (value < 60) return 'error';
    return 'fatal';
  }
  if (typeof value !== 'string') return undefined;
  const extra = extraNames[value.toLowerCase()];
  if (extra) return extra;
  const index = parseSeverity(value);
  return index === undefined || index < 0 ? undefined : severities[index];
}
