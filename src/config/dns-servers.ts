import { promises as dns } from 'node:dns';
import net from 'node:net';

const examples = 'e.g. 1.1.1.1, 9.9.9.9:53, [2606:4700:4700::1111]:53';

/**
 * OPS_DNS_SERVERS: a comma list of resolvers as `ip[:port]` (IPv6 in brackets when a port
 * follows), for the DNS look-ups the server makes itself (the SSO domain verification). A
 * resolver is given by address: a host name would need a resolver to find it. Empty or unset:
 * the system's resolvers. `fail` builds the error naming the variable.
 */
export function parseDnsServers(raw: string | undefined, fail: (message: string) => Error): string[] {
  const servers = (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const server of servers) {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
    const v4 = /^([\d.]+)(?::(\d+))?$/.exec(server);
    const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [server, undefined];
    const family = net.isIP(address);
    if (family === 0 || (family === 4 && bracketed) || (family === 6 && !bracketed && server !== address)) {
      throw fail(`"${server}" is not an IP address with an optional port (${examples}); resolvers are given by address`);
    }
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw fail(`"${server}": the port must be between 1 and 65535`);
  }
  try {
    new dns.Resolver().setServers(servers);
  } catch (error) {
    throw fail(`${(error as Error).message} (${examples})`);
  }
  return servers;
}
