import { badRequest } from '../errors/app-error.js';

const units = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `5m`, `4h`, `1d` → milliseconds; undefined for anything else. */
export function durationMs(text: string): number | undefined {
  const match = /^(\d{1,6})([smhd])$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * units[match[2] as keyof typeof units];
}

/** The field's duration within [min, max], or a 400 naming the field and the range. */
export function checkDuration(field: string, text: string, min: string, max: string): number {
  const ms = durationMs(text);
  const lo = durationMs(min)!;
  const hi = durationMs(max)!;
  if (ms === undefined) throw badRequest(`${field}: "${text}" is not a duration; write <n><unit> with unit s, m, h or d (e.g. "5m")`, { field });
  if (ms < lo || ms > hi) throw badRequest(`${field}: ${text} is outside ${min}…${max}`, { field });
  return ms;
}
