import dns from 'node:dns';
import net from 'node:net';

/**
 * Which addresses the server may call for a tenant (DECISIONS.md §18, §22): notification
 * channels, single sign-on's identity providers — never loopback, private, link-local, cloud
 * metadata, unspecified, CGNAT, multicast or reserved space, whether written as IPv4, IPv6 or
 * IPv4 inside IPv6 (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96). One list,
 * asked before a URL is accepted (checkHost) and at every connection (guardedLookup here, the
 * socket's address in guarded-agent.ts). Only OPS_OUTBOUND_ALLOW_PRIVATE switches it off.
 *
 * This folder is below the capabilities: it imports none of them, so each can use it.
 */
type Kind = 'unspecified' | 'private' | 'shared (CGNAT)' | 'loopback' | 'link-local' | 'reserved' | 'documentation' | 'benchmarking' | 'multicast' | 'site-local';

const ranges: Array<[prefix: string, bits: number, kind: Kind]> = [
  ['0.0.0.0', 8, 'unspecified'], // "this network"
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // 169.254.169.254: metadata
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // 255.255.255.255 broadcast
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'], // unique local; fd00:ec2::254, the EC2 metadata address, is inside
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'], // deprecated, still routed by some
  ['ff00::', 8, 'multicast'],
  ['2001:db8::', 32, 'documentation'],
  ['100::', 64, 'reserved'], // discard
];
/** One BlockList per kind, so a refusal says which kind of address it was. */
const blocked = new Map<Kind, net.BlockList>();
for (const [prefix, bits, kind] of ranges) {
  const list = blocked.get(kind) ?? new net.BlockList();
  list.addSubnet(prefix, bits, net.isIPv6(prefix) ? 'ipv6' : 'ipv4');
  blocked.set(kind, list);
}
/** The cloud metadata services' addresses (AWS, GCP, Azure, OpenStack; EC2 over IPv6; Alibaba), named as such. */
const metadataAddresses = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

/** The IPv4 address an IPv6 address carries (mapped, compatible or NAT64), if it carries one. */
export function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /^(?:::ffff:|::|64:ff9b::|::ffff:0:)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|::|64:ff9b::|::ffff:0:)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Why an IP address may not be called ("127.0.0.1 is a loopback address"), or undefined when it may. A non-IP text is refused. */
export function forbiddenAddress(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  const plain = bare.replace(/%.*$/, '');
  const family = net.isIP(plain);
  if (family === 0) return `"${address}" is not an IP address`;
  if (family === 6) {
    const inner = embeddedIpv4(plain);
    if (inner !== undefined) {
      const reason = forbiddenAddress(inner);
      return reason && `${bare} carries ${inner}: ${reason}`;
    }
  }
  const type = family === 6 ? 'ipv6' : 'ipv4';
  for (const [kind, list] of blocked) {
    if (list.check(plain, type)) return `${bare} is ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address${metadataAddresses.has(plain.toLowerCase()) ? ' (cloud metadata)' : ''}`;
  }
  return undefined;
}

/** A connection refused by the address policy: never retried (the URL points where it may not). */
export class AddressRefusedError extends Error {
  constructor(readonly host: string, readonly reason: string) {
    super(`address refused for ${host}: ${reason}`);
    this.name = 'AddressRefusedError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

export const unbracketed = (host: string) => host.replace(/^\[|\]$/g, '');

/**
 * dns.lookup that fails when any address the name resolves to is forbidden: the addresses it
 * hands to the socket are the ones it checked, so a name that resolves elsewhere on the next
 * lookup (DNS rebinding) is checked again at that connection.
 */
export function guardedLookup(base: LookupFunction = dns.lookup as unknown as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as dns.LookupAddress[];
      const bad = list.map((a) => forbiddenAddress(a.address)).find((reason) => reason !== undefined);
      if (bad !== undefined || list.length === 0) return callback(new AddressRefusedError(hostname, bad ?? 'no address'), '');
      if (options.all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** The check before a URL is accepted: a host (name or literal) whose every address may be called, or the reason it may not. */
export async function checkHost(hostname: string, lookup: LookupFunction = dns.lookup as unknown as LookupFunction): Promise<string | undefined> {
  const host = unbracketed(hostname);
  if (net.isIP(host)) return forbiddenAddress(host);
  const addresses = await new Promise<dns.LookupAddress[]>((resolve, reject) =>
    lookup(host, { all: true }, (error, list) => (error ? reject(error) : resolve(list as dns.LookupAddress[]))),
  ).catch((error: NodeJS.ErrnoException) => error);
  if (addresses instanceof Error) return `the host "${host}" does not resolve (${addresses.code ?? addresses.message})`;
  if (addresses.length === 0) return `the host "${host}" has no address`;
  const bad = addresses.find((a) => forbiddenAddress(a.address) !== undefined);
  return bad ? `the host "${host}" resolves to ${bad.address}: ${forbiddenAddress(bad.address)}` : undefined;
}
