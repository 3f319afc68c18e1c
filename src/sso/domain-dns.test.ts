// The TXT look-up of domain verification (domain-dns.ts) against a loopback DNS server: what it
// finds, and that every failure is an answer in words of ours, never a hang or a throw.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { lookupTxt, maxTxtRecords } from './domain-dns.js';
import { startTestDns, type TestDns } from '../test-support/sso/test-dns.js';
import { freePort } from '../test-support/test-process.js';

describe('lookupTxt', () => {
  let dns: TestDns;
  before(async () => {
    dns = await startTestDns();
  });
  after(async () => {
    await dns.close();
  });

  test("a record's character-strings are joined; several records are each one string", async () => {
    dns.txt.set('_opsplatform.joined.example', [['opsplatform-domain-', 'verification=abc'], ['v=spf1 -all']]);
    assert.deepEqual(await lookupTxt('_opsplatform.joined.example', { servers: [dns.server] }), { kind: 'found', records: ['opsplatform-domain-verification=abc', 'v=spf1 -all'] });
  });

  test(`at most ${maxTxtRecords} records are read`, async () => {
    dns.txt.set('_opsplatform.many.example', Array.from({ length: maxTxtRecords + 10 }, (_, i) => [`r${i}`]));
    const answer = await lookupTxt('_opsplatform.many.example', { servers: [dns.server] });
    assert.equal(answer.kind, 'found');
    assert.equal(answer.kind === 'found' && answer.records.length, maxTxtRecords);
  });

  test('a name that does not exist, or holds no TXT record → none', async () => {
    dns.txt.set('_opsplatform.empty.example', []);
    assert.deepEqual(await lookupTxt('_opsplatform.empty.example', { servers: [dns.server] }), { kind: 'none' });
    assert.deepEqual(await lookupTxt('_opsplatform.nowhere.example', { servers: [dns.server] }), { kind: 'none' });
  });

  test('SERVFAIL, a server that never answers, nobody listening → failed, saying which in words', async () => {
    dns.failing.add('_opsplatform.broken.example');
    assert.deepEqual(await lookupTxt('_opsplatform.broken.example', { servers: [dns.server] }), { kind: 'failed', reason: 'the DNS server answered SERVFAIL: it could not resolve the name' });
    dns.silent.add('_opsplatform.silent.example');
    assert.deepEqual(await lookupTxt('_opsplatform.silent.example', { servers: [dns.server], timeoutMs: 300 }), { kind: 'failed', reason: 'the DNS server did not answer within 0.3 s' });
    const closed = await lookupTxt('_opsplatform.joined.example', { servers: [`127.0.0.1:${await freePort()}`], timeoutMs: 300 });
    assert.equal(closed.kind, 'failed');
  });
});
