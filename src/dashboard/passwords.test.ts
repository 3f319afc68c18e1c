import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hashPassword, productionHashParameters, verifyPassword } from './passwords.js';

// No test server in this file: hashes are made at the production cost (test-server.ts lowers it
// for the other files), so what a server stores is checked here.

test('a server hashes at scrypt N=2^15, r=8, p=1 with a 16-byte salt and a 32-byte hash, recorded in the hash', async () => {
  assert.deepEqual({ ...productionHashParameters }, { N: 2 ** 15, r: 8, p: 1, keylen: 32 });
  const stored = await hashPassword('correct horse battery staple');
  const [scheme, N, r, p, salt, hash] = stored.split('$');
  assert.deepEqual([scheme, N, r, p], ['scrypt', '32768', '8', '1']);
  assert.equal(Buffer.from(salt!, 'base64url').length, 16);
  assert.equal(Buffer.from(hash!, 'base64url').length, 32);
  assert.notEqual(await hashPassword('correct horse battery staple'), stored, 'a fresh salt per hash');
  assert.equal(await verifyPassword('correct horse battery staple', stored), true);
  assert.equal(await verifyPassword('correct horse battery stapl', stored), false);
});

test('a hash made with other parameters is verified with its own (a cost raised later leaves old passwords valid)', async () => {
  const salt = Buffer.alloc(16, 7);
  const crypto = await import('node:crypto');
  const made = crypto.scryptSync('pässword in NFC', salt, 24, { N: 2 ** 10, r: 4, p: 2 });
  const stored = `scrypt$1024$4$2$${salt.toString('base64url')}$${made.toString('base64url')}`;
  assert.equal(await verifyPassword('pässword in NFC', stored), true);
  // The same text decomposed (a + combining diaeresis) is the same password.
  assert.equal(await verifyPassword('pa\u0308ssword in NFC', stored), true);
  assert.equal(await verifyPassword('password in NFC', stored), false);
});

test('malformed stored hashes never match', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.string(),
        fc.tuple(fc.constantFrom('scrypt', 'bcrypt', ''), fc.constantFrom('1024', 'x', '', '1e3', '-1'), fc.constantFrom('8', 'NaN', ''), fc.constantFrom('1', '0.5'), fc.base64String(), fc.constantFrom('', 'AA'))
          .map((parts) => parts.join('$')),
      ),
      async (stored) => {
        let matched: boolean;
        try {
          matched = await verifyPassword('correct horse battery staple', stored);
        } catch (error) {
          // Parameters scrypt itself refuses (N not a power of two, p below 1) are errors, not matches.
          assert.ok(error instanceof Error);
          return;
        }
        assert.equal(matched, false);
      },
    ),
    { numRuns: 200 },
  );
});
