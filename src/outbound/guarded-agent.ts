// The undici dispatcher every outbound call made for a tenant goes through (notifications,
// single sign-on). Each capability imports this module with its first such call, so a server
// that makes none never loads undici.
import net from 'node:net';
import { Agent, buildConnector } from 'undici';
import { AddressRefusedError, forbiddenAddress, guardedLookup, unbracketed, type LookupFunction } from './address-policy.js';

export interface GuardOptions {
  /** OPS_OUTBOUND_ALLOW_PRIVATE: no address is refused. */
  allowPrivate: boolean;
  /** How names resolve (dns.lookup unless a test injects a resolver). */
  lookup?: LookupFunction;
  /**
   * Host names whose connections are not checked: a test's loopback servers standing for the
   * public Internet, so that a refused call can be shown beside an allowed one in one server.
   * Never read from configuration: OPS_OUTBOUND_ALLOW_PRIVATE is the operator's only switch.
   */
  publicHostsForTests?: readonly string[];
}

/**
 * The guarded dispatcher. Unless private addresses are allowed, each connection is checked
 * three ways: an IP literal before connecting, a name through guardedLookup (net.connect
 * connects to what it returns), and the connected socket's remote address (nothing else can slip
 * through). Redirects are never followed: undici's `request` does not follow them, and callers of
 * `fetch` pass `redirect: 'manual'` — a 3xx is an answer, never a second connection.
 */
export function guardedAgent(options: GuardOptions): Agent {
  const common = { keepAliveTimeout: 30_000, connections: 16 };
  if (options.allowPrivate) return new Agent(common);
  // net.connect / tls.connect take `lookup` (undici passes its connect options through to them).
  const tcp: Pick<net.TcpNetConnectOpts, 'lookup'> = { lookup: guardedLookup(options.lookup) as unknown as net.LookupFunction };
  const connectBase = buildConnector(tcp as buildConnector.BuildOptions);
  const exempt = new Set(options.publicHostsForTests ?? []);
  const connectExempt = exempt.size ? buildConnector((options.lookup ? { lookup: options.lookup } : {}) as buildConnector.BuildOptions) : undefined;
  const connect: buildConnector.connector = (target, callback) => {
    const host = unbracketed(target.hostname);
    if (connectExempt && exempt.has(host)) return connectExempt(target, callback);
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
