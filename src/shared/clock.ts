/**
 * The service's notion of "now". Tests move it (a purge 31 days later) without touching
 * the system clock; everything that compares times asks the clock.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock a test can move forward. */
export class OffsetClock implements Clock {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** ISO 8601 UTC with milliseconds, the only timestamp form in responses. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** The calendar month (UTC) holding `ms`: its key and bounds. */
export function monthOf(ms: number): { key: string; start: number; end: number } {
  const d = new Date(ms);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { key: new Date(start).toISOString().slice(0, 7), start, end };
}
