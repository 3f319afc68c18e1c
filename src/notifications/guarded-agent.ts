// The undici dispatcher notifications are sent through: loaded with the first notification sent
// (notifications/capability.ts), so a server that sends none never loads undici.
import net from 'node:net';
import { Agent, buildConnector } from 'undici';
import { AddressRefusedError, forbiddenAddress, guardedLookup, unbracketed, type LookupFunction } from './address-policy.js';

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
