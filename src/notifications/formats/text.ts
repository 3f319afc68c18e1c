/** Text within a service's limits: cut at a code point (never half a surrogate pair), marked with "…". */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  let end = max - 1;
  // A high surrogate at the cut would leave half a character.
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** Any JSON value as short text: strings as they are, others as compact JSON. */
export function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `key=value, …` of a group. */
export const groupText = (group: Record<string, unknown>): string =>
  Object.entries(group)
    .map(([k, v]) => `${k}=${show(v)}`)
    .join(', ');

/** One line per event: time, severity, name, actor, source, message; then its payload. */
export function eventLine(event: Record<string, unknown>): string {
  const parts = ['ts', 'severity', 'event', 'actor', 'source'].map((k) => event[k]).filter((v) => typeof v === 'string' && v !== '');
  const message = typeof event.message === 'string' && event.message ? `: ${event.message}` : '';
  return `${parts.join(' ')}${message}`;
}

export const isImage = (contentType: string): boolean => /^image\//i.test(contentType);

export const statusWord = { firing: 'FIRING', resolved: 'RESOLVED', test: 'TEST' } as const;
