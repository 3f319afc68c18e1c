import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fc from 'fast-check';
import { CursorCodec } from './cursor.js';
import { AppError } from '../errors/app-error.js';

const codec = new CursorCodec(crypto.randomBytes(32));
// A cursor carries JSON, in which -0 is written 0; list keys (times, ids, epoch ms) are never -0.
const number = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0));
const key = fc.array(fc.oneof(fc.string(), fc.integer(), number), { maxLength: 4 });
const isBadRequest = (error: unknown) => error instanceof AppError && error.code === 'bad_request' && error.status === 400;

test('cursors survive the round trip for any key, list and tenant', () => {
  fc.assert(
    fc.property(key, fc.string(), fc.string(), (k, list, tenant) => {
      assert.deepEqual(codec.decode(codec.encode(list, tenant, k), list, tenant), k);
    }),
  );
});

test('any change to a cursor is refused with 400', () => {
  fc.assert(
    fc.property(key, fc.nat(), fc.integer({ min: 1, max: 0xffff }), (k, at, delta) => {
      const cursor = codec.encode('members', 'org', k);
      const i = at % cursor.length;
      const changed = cursor.slice(0, i) + String.fromCharCode((cursor.charCodeAt(i) + delta) % 0x10000) + cursor.slice(i + 1);
      if (changed === cursor) return;
      assert.throws(() => codec.decode(changed, 'members', 'org'), isBadRequest);
    }),
  );
});

test('truncated, extended and arbitrary strings are refused with 400', () => {
  const cursor = codec.encode('members', 'org', ['2026-11-21T00:00:00.000Z', 'usr_1']);
  fc.assert(
    fc.property(fc.nat(), fc.string({ minLength: 1 }), (cut, tail) => {
      assert.throws(() => codec.decode(cursor.slice(0, cut % cursor.length), 'members', 'org'), isBadRequest);
      assert.throws(() => codec.decode(cursor + tail, 'members', 'org'), isBadRequest);
    }),
  );
  fc.assert(fc.property(fc.string(), (s) => assert.throws(() => codec.decode(s, 'members', 'org'), isBadRequest)));
});

test('a cursor of another tenant, another list or another key is refused', () => {
  const cursor = codec.encode('members', 'org-a', [1]);
  assert.throws(() => codec.decode(cursor, 'members', 'org-b'), isBadRequest);
  assert.throws(() => codec.decode(cursor, 'tokens', 'org-a'), isBadRequest);
  assert.throws(() => new CursorCodec(crypto.randomBytes(32)).decode(cursor, 'members', 'org-a'), isBadRequest);
});

test('a re-signed cursor of an older format is refused as stale', () => {
  const secret = crypto.randomBytes(32);
  const payload = Buffer.from(JSON.stringify({ v: 0, l: 'members', t: 'org', k: [1] })).toString('base64url');
  const stale = `${payload}.${crypto.createHmac('sha256', secret).update(payload).digest('base64url')}`;
  assert.throws(() => new CursorCodec(secret).decode(stale, 'members', 'org'), isBadRequest);
});

// Cursors are remembered each way (CursorCodec's memo): a remembered cursor must be checked
// against the list and tenant like a new one, and hand out a key the caller may change.
test('a remembered cursor is still refused for another tenant or list, and its key is the caller’s own', () => {
  fc.assert(
    fc.property(key, fc.string(), fc.string(), (k, tenant, otherTenant) => {
      const cursor = codec.encode('members', tenant, k);
      assert.equal(codec.encode('members', tenant, k), cursor);
      const first = codec.decode(cursor, 'members', tenant);
      (first as Array<string | number>).length = 0;
      assert.deepEqual(codec.decode(cursor, 'members', tenant), k);
      if (otherTenant !== tenant) assert.throws(() => codec.decode(cursor, 'members', otherTenant), isBadRequest);
      assert.throws(() => codec.decode(cursor, 'tokens', tenant), isBadRequest);
    }),
  );
});
