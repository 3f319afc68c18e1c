import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkKey } from './key.js';
import { derivedEventIds } from './event-ids.js';
import { answerKey, seal, unseal } from './sealed-answer.js';
import { isUuid } from '../shared/ids.js';

describe('Idempotency-Key values', () => {
  for (const key of ['a', 'k'.repeat(255), '0190a6b4-7c1e-7000-8000-000000000000', 'order 17 / retry #3 ~!@$%^&*()']) {
    test(`${JSON.stringify(key.length > 40 ? `${key.slice(0, 20)}…(${key.length})` : key)} is a key`, () => assert.equal(checkKey(key), key));
  }
  for (const [key, why] of [
    ['', /is empty/],
    ['k'.repeat(256), /is 256 characters long/],
    ['caf\u00e9', /outside printable ASCII/],
    ['line\nbreak', /outside printable ASCII/],
    ['tab\t', /outside printable ASCII/],
  ] as const) {
    test(`${JSON.stringify(key.slice(0, 20))} → 400 (${why.source})`, () => {
      assert.throws(() => checkKey(key), (error: { code?: string; message?: string }) => error.code === 'bad_request' && why.test(error.message ?? ''));
    });
  }
  test('several Idempotency-Key headers → 400', () => assert.throws(() => checkKey(['a', 'b']), /one Idempotency-Key header/));
});

describe('derived event ids', () => {
  const firstUse = Date.parse('2026-05-01T12:00:00.000Z');
  test('UUIDv7 with the first use as its time, in body order, the same for the same nonce and body', () => {
    const ids = derivedEventIds('nonce-1', 'a'.repeat(64), firstUse);
    const list = [0, 1, 2, 255, 10_000].map(ids);
    for (const id of list) {
      assert.ok(isUuid(id), id);
      assert.equal(id[14], '7');
      assert.match(id[19]!, /[89ab]/);
      assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), firstUse);
    }
    assert.deepEqual([...list].sort(), list);
    assert.equal(new Set(list).size, list.length);
    assert.deepEqual([0, 1, 2, 255, 10_000].map(derivedEventIds('nonce-1', 'a'.repeat(64), firstUse)), list);
  });
  test('another nonce or another body gives other ids', () => {
    const id = derivedEventIds('nonce-1', 'a'.repeat(64), firstUse)(0);
    assert.notEqual(derivedEventIds('nonce-2', 'a'.repeat(64), firstUse)(0), id);
    assert.notEqual(derivedEventIds('nonce-1', 'b'.repeat(64), firstUse)(0), id);
  });
});

describe('sealed answers', () => {
  test('open only with the same token, key and row', () => {
    const key = answerKey('ops_live_one', 'k1');
    const sealed = seal(key, 'tok_1\0k1', Buffer.from('{"token":"ops_live_secret"}'));
    assert.ok(!Buffer.from(sealed, 'base64').toString('latin1').includes('ops_live_secret'));
    assert.equal(unseal(key, 'tok_1\0k1', sealed).toString(), '{"token":"ops_live_secret"}');
    assert.throws(() => unseal(answerKey('ops_live_two', 'k1'), 'tok_1\0k1', sealed));
    assert.throws(() => unseal(key, 'tok_2\0k1', sealed));
  });
});
