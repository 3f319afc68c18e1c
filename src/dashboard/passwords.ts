import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (password: crypto.BinaryLike, salt: crypto.BinaryLike, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;

/** DECISIONS.md §17: at least 12 characters (code points); the upper bound keeps hashing cheap to refuse. */
export const minPasswordLength = 12;
export const maxPasswordLength = 1024;

/** scrypt parameters of new hashes (OWASP's minimum for scrypt is N=2^17 r=8 p=1 at 128 MiB; 2^15 keeps a sign-in ~50 ms on small hosts). */
const current = { N: 2 ** 15, r: 8, p: 1, keylen: 32 };
/** The parameters new hashes get in a server (passwords.test.ts holds them to these). */
export const productionHashParameters = Object.freeze({ ...current });

/**
 * For test processes only (test-support/test-server.ts calls it): new hashes at N = 2^10, 32 times
 * cheaper. At 2^15 a hash costs 230 ms of CPU on the 2-core VM, and `npm test` hashed or checked
 * ~300 passwords: about a tenth of the suite's CPU. Each hash records its parameters and
 * verification reads them from it, so the code under test is the code that runs; Rails and Devise
 * lower bcrypt's cost in tests the same way. Servers the tests spawn (`opsctl serve`) keep 2^15.
 */
export function cheapHashesForTests(): void {
  current.N = 2 ** 10;
}

const maxmemFor = (N: number, r: number, p: number) => 128 * N * r * p + 16 * 1024 * 1024;

/**
 * `scrypt$N$r$p$<salt>$<hash>` (salt and hash base64url): each hash records its parameters, so
 * raising them later leaves existing passwords verifiable. The salt is 16 random bytes per hash.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const { N, r, p, keylen } = current;
  const hash = await scrypt(password.normalize('NFC'), salt, keylen, { N, r, p, maxmem: maxmemFor(N, r, p) });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** Constant-time comparison of a password with a stored hash; false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (![N, r, p].every(Number.isSafeInteger) || expected.length === 0) return false;
  const actual = await scrypt(password.normalize('NFC'), salt, expected.length, { N, r, p, maxmem: maxmemFor(N, r, p) });
  return crypto.timingSafeEqual(actual, expected);
}

/** A hash no password matches, verified against when the e-mail is unknown: both answers take as long. */
let decoy: Promise<string> | undefined;
export const decoyHash = (): Promise<string> => (decoy ??= hashPassword(crypto.randomBytes(32).toString('hex')));

/** 32 random bytes, base64url: session cookies' and password links' secrets. */
export const newSecret = (): string => crypto.randomBytes(32).toString('base64url');

/** Only this is stored of a secret. */
export const sha256 = (value: string): string => crypto.hash('sha256', value, 'hex');
