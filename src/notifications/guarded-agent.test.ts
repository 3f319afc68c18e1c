import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type dns from 'node:dns';
import { request } from 'undici';
import { checkHost, type LookupFunction } from './address-policy.js';
import { guardedAgent } from './guarded-agent.js';
import { startReceiver } from './test-receiver.js';

/** A resolver that answers `hook.example` from a list, one answer per lookup (what a rebinding DNS server does). */
function rebinding(answers: string[]): LookupFunction & { lookups: number } {
  const lookup = ((hostname: string, options: dns.LookupOptions, callback: (e: Error | null, a: string | dns.LookupAddress[], f?: number) => void) => {
    const address = answers[Math.min(lookup.lookups++, answers.length - 1)]!;
    const family = address.includes(':') ? 6 : 4;
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction & { lookups: number };
  lookup.lookups = 0;
  return lookup;
}

const receiver = await startReceiver([{ status: 200 }]);
after(() => receiver.close());

test('DNS rebinding: a name that was public at creation and resolves to loopback at connection is refused; nothing reaches the address', async () => {
  const lookup = rebinding(['93.184.216.34', '127.0.0.1']);
  assert.equal(await checkHost('hook.example', lookup), undefined, 'public at creation');
  const agent = guardedAgent({ allowPrivate: false, lookup });
  try {
    await assert.rejects(request(`http://hook.example:${receiver.port}/hook`, { method: 'POST', body: '{}', dispatcher: agent }), /address refused for hook\.example: 127\.0\.0\.1/);
    assert.equal(receiver.received.length, 0);
  } finally {
    await agent.close();
  }
});

test('an IP literal (loopback, IPv4-mapped) is refused before connecting; with private addresses allowed it is sent', async () => {
  const agent = guardedAgent({ allowPrivate: false });
  try {
    await assert.rejects(request(`http://127.0.0.1:${receiver.port}/hook`, { method: 'POST', body: '{}', dispatcher: agent }), /address refused/);
    await assert.rejects(request(`http://[::ffff:127.0.0.1]:${receiver.port}/hook`, { method: 'POST', body: '{}', dispatcher: agent }), /address refused/);
    assert.equal(receiver.received.length, 0);
  } finally {
    await agent.close();
  }
  const open = guardedAgent({ allowPrivate: true });
  try {
    const answer = await request(`http://127.0.0.1:${receiver.port}/hook`, { method: 'POST', body: '{}', dispatcher: open });
    await answer.body.text();
    assert.equal(answer.statusCode, 200);
    assert.equal(receiver.received.length, 1);
  } finally {
    await open.close();
  }
});

test('creation check: a name resolving to several addresses is refused when any of them is private', async () => {
  const lookup = ((_h: string, _o: dns.LookupOptions, callback: (e: Error | null, a: dns.LookupAddress[]) => void) =>
    callback(null, [{ address: '93.184.216.34', family: 4 }, { address: '10.1.2.3', family: 4 }])) as unknown as LookupFunction;
  assert.match((await checkHost('mixed.example', lookup))!, /resolves to 10\.1\.2\.3/);
  assert.match((await checkHost('localhost'))!, /127\.0\.0\.1|::1/);
});
