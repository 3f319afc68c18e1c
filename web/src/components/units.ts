// Numbers in human units for the dashboard's pages: counts with the reader's thousands
// separators, bytes in decimal units (MB = 1,000,000 bytes, as DECISIONS.md §8 and SPEC.md's
// limits count them), dates in UTC where the API's periods are UTC.

const counts = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });

/** `1234567` → `1,234,567` (in the reader's locale). */
export function formatCount(n: number): string {
  return counts.format(n);
}

const byteUnits = ['bytes', 'KB', 'MB', 'GB', 'TB', 'PB'] as const;

/** Decimal units with three significant digits at most: `999 bytes`, `1.5 KB`, `12.3 MB`, `250 GB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1000) return `${formatCount(bytes)} ${bytes === 1 ? 'byte' : 'bytes'}`;
  let unit = 0;
  let value = bytes;
  while (value >= 1000 && unit < byteUnits.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  const text = new Intl.NumberFormat(undefined, { maximumFractionDigits: digits }).format(Number(value.toFixed(digits)));
  return `${text} ${byteUnits[unit]}`;
}

/** A day in UTC: `1 Dec 2026`. */
export function formatUtcDate(iso: string | number): string {
  return new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' }).format(new Date(iso));
}

/** A moment in the reader's time zone: `25 Nov 2026, 20:28`. */
export function formatDateTime(iso: string | number): string {
  return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));
}
