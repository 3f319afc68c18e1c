import dns from 'node:dns';
import net from 'node:net';
import { Agent, buildConnector } from 'undici';
import { forbiddenAddress } from './address-policy.js';

/** A connection refused by the address policy: never retried (the channel's URL points where it may not). */
export class AddressRefusedError extends Error {
  constructor(readonly host: string, reason: string) {
    super(`address refused for ${host}: ${reason}`);
    this.name = 'AddressRefusedError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

const unbracketed = (host: string) => host.replace(/^\[|\]$/g, '');

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

/**
 * The undici dispatcher every notification is sent through. Unless private addresses are
 * allowed (OPS_WEBHOOK_ALLOW_PRIVATE), each connection is checked three ways: an IP literal
 * before connecting, a name through guardedLookup (net.connect connects to what it returns),
 * and the connected socket's remote address (nothing else can slip through). Redirects are
 * never followed (undici's request does not follow them), so a 3xx cannot lead elsewhere.
 */
export function guardedAgent(options: { allowPrivate: boolean; lookup?: LookupFunction }): Agent {
  const common = { keepAliveTimeout: 30_000, connections: 16 };
  if (options.allowPrivate) return new Agent(common);
  // net.connect / tls.connect take `lookup` (undici passes its connect options through to them).
  const tcp: Pick<net.TcpNetConnectOpts, 'lookup'> = { lookup: guardedLookup(options.lookup) as unknown as net.LookupFunction };
  const connectBase = buildConnector(tcp as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (target, callback) => {
    const host = unbracketed(target.hostname);
    if (net.isIP(host)) {
      const reason = forbiddenAddress(host);
      if (reason !== undefined) return callback(new AddressRefusedError(host, reason), null);
    }
    connectBase(target, (error, socket) => {
      if (error || !socket) return callback(error ?? new Error('no socket'), null);
      const remote = socket.remoteAddress;
      const reason = remote === undefined ? undefined : forbiddenAddress(remote);
      if (reason !== undefined) {
        socket.destroy();
        return callback(new AddressRefusedError(host, reason), null);
      }
      callback(null, socket);
    });
  };
  return new Agent({ ...common, connect });
}

/** The creation-time check: a host (name or literal) whose every address may be sent to, or the reason it may not. */
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
