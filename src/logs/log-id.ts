/**
 * Log entry ids ↔ event ids. A log entry is an event of the dataset `logs`; its id is
 * `log_` + the event's 128-bit UUID written in ULID form (26 Crockford base32 characters).
 * For a UUID v7 (what POST /logs writes) the first 48 bits are the millisecond timestamp,
 * exactly as in a ULID, so the id is a genuine time-sortable ULID. The mapping is a
 * bijection: no lookup table, no marker in the payload, and `meta` comes back as sent.
 */
const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const prefix = 'log_';
const ulidPattern = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export function logIdOf(eventId: string): string {
  let value = BigInt(`0x${eventId.replace(/-/g, '')}`);
  let out = '';
  for (let i = 0; i < 26; i++) {
    out = alphabet[Number(value & 31n)]! + out;
    value >>= 5n;
  }
  return prefix + out;
}

/** The event id of a log id, or undefined when it is not one (answered as not found). */
export function eventIdOf(logId: string): string | undefined {
  if (!logId.startsWith(prefix)) return undefined;
  const ulid = logId.slice(prefix.length).toUpperCase();
  if (!ulidPattern.test(ulid)) return undefined;
  let value = 0n;
  for (const ch of ulid) value = (value << 5n) | BigInt(alphabet.indexOf(ch));
  const hex = value.toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
