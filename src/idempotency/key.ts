import { badRequest } from '../errors/app-error.js';

export const keyHeader = 'idempotency-key';
export const replayedHeader = 'Idempotent-Replayed';

/** DECISIONS.md §16: 1 to 255 printable ASCII characters (space to tilde). */
const keyPattern = /^[\x20-\x7e]{1,255}$/;

/** The key of a request's Idempotency-Key header, or a 400 saying what a key may be. */
export function checkKey(value: string | string[]): string {
  if (Array.isArray(value)) throw badRequest('send one Idempotency-Key header, not several');
  if (!keyPattern.test(value)) {
    const what = value.length === 0 ? 'is empty' : value.length > 255 ? `is ${value.length} characters long` : 'holds a character outside printable ASCII';
    throw badRequest(`invalid Idempotency-Key header: it ${what}; a key is 1 to 255 printable ASCII characters (a UUID is a good key)`);
  }
  return value;
}
