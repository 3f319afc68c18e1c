/**
 * Severity names any ingest reads (DECISIONS §9's, and §21's syslog names `notice` and `alert`
 * with winston's `http`, `verbose` and `silly`): one table for native ingest, OTLP and the shipper
 * routes, since an event's fields are mapped by one function whichever route it came by. A Map,
 * not an object: `constructor` must not find Object's.
 */
const severityNames = new Map<string, number>(
  Object.entries({
    debug: 0, trace: 0, verbose: 0, silly: 0,
    info: 1, information: 1, informational: 1, notice: 1, http: 1,
    warn: 2, warning: 2,
    error: 3, err: 3,
    fatal: 4, critical: 4, crit: 4, panic: 4, emergency: 4, emerg: 4, alert: 4,
  }),
);
const otelText = /^(trace|debug|info|warn|error|fatal)[1-4]$/;

/** A severity as sent under `severity` → its index; undefined = absent (use the default); -1 = invalid. Numbers are OpenTelemetry's. */
export function parseSeverity(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const known = severityNames.get(value) ?? severityNames.get(value.toLowerCase());
    if (known !== undefined) return known;
    const otel = otelText.exec(value.toLowerCase());
    return otel ? severityNames.get(otel[1]!)! : -1;
  }
  if (typeof value === 'number' && Number.isInteger(value)) {
    // OpenTelemetry SeverityNumber: 1-4 TRACE, 5-8 DEBUG, 9-12 INFO, 13-16 WARN, 17-20 ERROR, 21-24 FATAL; 0 unspecified.
    if (value === 0) return undefined;
    if (value >= 1 && value <= 24) return Math.max(0, Math.ceil(value / 4) - 2);
  }
  return -1;
}

/**
 * A level as sent under an alias of severity (`level`, `log.level`) or in a Loki label → its
 * index; undefined when it is not one we know (the value then stays in the payload: these
 * names are others' too, and a log line is never refused for its level). Names as
 * parseSeverity's; numbers are pino's and bunyan's levels (10 trace, 20 debug, 30 info, 40 warn,
 * 50 error, 60 fatal; a custom level in between counts as the one below, 70 and up fatal), the
 * programs that write a numeric `level`.
 */
export function levelSeverity(value: unknown): number | undefined {
  if (typeof value === 'number') {
    if (!(value >= 10)) return undefined; // NaN too
    if (value < 30) return 0;
    if (value < 40) return 1;
    if (value < 50) return 2;
    if (value < 60) return 3;
    return value === Infinity ? undefined : 4;
  }
  if (typeof value !== 'string') return undefined;
  const index = parseSeverity(value)!;
  return index < 0 ? undefined : index;
}

/** How an unknown severity's error says what is accepted. */
export const severityHint = 'use debug, info, warn, error, fatal, an alias or an OpenTelemetry severity number';
