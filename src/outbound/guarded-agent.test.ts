import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type dns from 'node:dns';
import type { AddressInfo } from 'node:net';
import { fetch, request } from 'undici';
import { checkHost, type LookupFunction } from './address-policy.js';
import { guardedAgent } from './guarded-agent.js';
import { startMetadataServer } from '../test-support/metadata-server.js';

/** A resolver that answers from a list, one answer per lookup (what a rebinding DNS server does). */
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

const metadata = await startMetadataServer();
after(() => metadata.close());

test('DNS rebinding: a name that was public when checked and resolves to loopback at connection is refused; nothing reaches the address', async () => {
  const lookup = rebinding(['93.184.216.34', '127.0.0.1']);
  assert.equal(await checkHost('hook.example', lookup), undefined, 'public when checked');
  const agent = guardedAgent({ allowPrivate: false, lookup });
  try {
    await assert.rejects(request(`http://hook.example:${metadata.port}/hook`, { method: 'POST', body: '{}', dispatcher: agent }), /address refused for hook\.example: 127\.0\.0\.1 is a loopback address/);
    assert.equal(metadata.hits.length, 0);
  } finally {
    await agent.close();
  }
});

test('an IP literal (loopback, IPv4-mapped) is refused before connecting; with private addresses allowed it is sent', async () => {
  const agent = guardedAgent({ allowPrivate: false });
  try {
    await assert.rejects(request(`http://127.0.0.1:${metadata.port}/hook`, { method: 'POST', body: '{}', dispatcher: agent }), /address refused for 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/);
    await assert.rejects(request(`http://[::ffff:127.0.0.1]:${metadata.port}/hook`, { method: 'POST', body: '{}', dispatcher: agent }), /address refused/);
    await assert.rejects(fetch(`http://127.0.0.1:${metadata.port}/latest/meta-data/`, { dispatcher: agent }), (error: Error) => /address refused/.test(String(error.cause)));
    assert.equal(metadata.hits.length, 0);
  } finally {
    await agent.close();
  }
  const open = guardedAgent({ allowPrivate: true });
  try {
    const answer = await request(`http://127.0.0.1:${metadata.port}/hook`, { method: 'POST', body: '{}', dispatcher: open });
    await answer.body.text();
    assert.equal(answer.statusCode, 200);
    assert.equal(metadata.hits.length, 1);
  } finally {
    await open.close();
    metadata.hits.length = 0;
  }
});

test('a redirect is never followed: a hop allowed as public that answers 302 to the metadata address leads nowhere', async () => {
  const hop = http.createServer((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${metadata.port}/latest/meta-data/` }).end());
  await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve));
  const hopUrl = `http://public-hop.test:${(hop.address() as AddressInfo).port}/`;
  // public-hop.test resolves to loopback and stands for a public address; 127.0.0.1 itself does not.
  const agent = guardedAgent({ allowPrivate: false, lookup: rebinding(['127.0.0.1']), publicHostsForTests: ['public-hop.test'] });
  try {
    const answer = await fetch(hopUrl, { dispatcher: agent, redirect: 'manual' });
    assert.equal(answer.status, 302, 'the redirect is the answer');
    await answer.body?.cancel();
    const viaRequest = await request(hopUrl, { dispatcher: agent });
    await viaRequest.body.text();
    assert.equal(viaRequest.statusCode, 302);
    // A caller that follows the Location by hand makes a new connection, and it is checked.
    await assert.rejects(fetch(answer.headers.get('location')!, { dispatcher: agent }), (error: Error) => /127\.0\.0\.1 is a loopback address/.test(String(error.cause)));
    assert.equal(metadata.hits.length, 0);
  } finally {
    await agent.close();
    hop.closeAllConnections();
    await new Promise<void>((resolve) => hop.close(() => resolve()));
  }
});

test('the check before a URL is accepted: a name resolving to several addresses is refused when any of them is private', async () => {
  const lookup = ((_h: string, _o: dns.LookupOptions, callback: (e: Error | null, a: dns.LookupAddress[]) => void) =>
    callback(null, [{ address: '93.184.216.34', family: 4 }, { address: '10.1.2.3', family: 4 }])) as unknown as LookupFunction;
  assert.match((await checkHost('mixed.example', lookup))!, /resolves to 10\.1\.2\.3: 10\.1\.2\.3 is a private address/);
  assert.match((await checkHost('localhost'))!, /127\.0\.0\.1|::1/);
});
