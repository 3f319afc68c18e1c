import { test } from 'node:test';
import assert from 'node:assert/strict';
import { embeddedIpv4, forbiddenAddress } from './address-policy.js';

const refused = [
  '127.0.0.1', '127.1.2.3', '0.0.0.0', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.1.1',
  '169.254.169.254', '169.254.0.1', '100.64.0.1', '100.127.255.255', '224.0.0.1', '255.255.255.255',
  '::1', '::', 'fc00::1', 'fd00:ec2::254', 'fe80::1', 'fe80::1%eth0', '[::1]',
  '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::127.0.0.1', '::127.0.0.1',
];
const allowed = ['1.1.1.1', '8.8.8.8', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2606:4700:4700::1111', '::ffff:1.1.1.1', '2a00:1450:4001::200e'];

for (const address of refused) {
  test(`${address} is refused`, () => assert.ok(forbiddenAddress(address)));
}
for (const address of allowed) {
  test(`${address} is allowed`, () => assert.equal(forbiddenAddress(address), undefined));
}

test('a refusal names the kind of address, and the metadata services as such', () => {
  assert.equal(forbiddenAddress('127.0.0.1'), '127.0.0.1 is a loopback address');
  assert.equal(forbiddenAddress('10.1.2.3'), '10.1.2.3 is a private address');
  assert.equal(forbiddenAddress('169.254.169.254'), '169.254.169.254 is a link-local address (cloud metadata)');
  assert.equal(forbiddenAddress('[fd00:ec2::254]'), 'fd00:ec2::254 is a private address (cloud metadata)');
  assert.equal(forbiddenAddress('0.0.0.0'), '0.0.0.0 is an unspecified address');
  assert.equal(forbiddenAddress('100.100.100.200'), '100.100.100.200 is a shared (CGNAT) address (cloud metadata)');
  assert.equal(forbiddenAddress('::ffff:a9fe:a9fe'), '::ffff:a9fe:a9fe carries 169.254.169.254: 169.254.169.254 is a link-local address (cloud metadata)');
});

test('a name is not an address (the caller resolves it first)', () => {
  assert.ok(forbiddenAddress('localhost'));
});

test('IPv4 inside IPv6, dotted or in hex', () => {
  assert.equal(embeddedIpv4('::ffff:7f00:1'), '127.0.0.1');
  assert.equal(embeddedIpv4('::FFFF:192.168.0.1'), '192.168.0.1');
  assert.equal(embeddedIpv4('2001:db8::1'), undefined);
});
