// A DNS server on 127.0.0.1 (dns2) that answers the TXT records a test sets: the tests point
// OPS_DNS_SERVERS at it, so domain verification runs its real look-up through Node's resolver.
import assert from 'node:assert/strict';
import { createServer, Packet } from 'dns2';
import type { TestResponse, TestServer } from '../test-server.js';
import { freePort } from '../test-process.js';

export interface TestDns {
  /** For OPS_DNS_SERVERS: `127.0.0.1:<port>`. */
  server: string;
  /** TXT records by name (lower case): each record as its character-strings. */
  txt: Map<string, string[][]>;
  /** Names answered SERVFAIL. */
  failing: Set<string>;
  /** Names never answered (a resolver that times out). */
  silent: Set<string>;
  /** Every name asked for, in order. */
  queries: string[];
  close(): Promise<void>;
}

/**
 * A name in `txt` answers its records (set to [], it exists and holds no TXT: NODATA); any other
 * name does not exist (NXDOMAIN).
 */
export async function startTestDns(): Promise<TestDns> {
  const txt = new Map<string, string[][]>();
  const failing = new Set<string>();
  const silent = new Set<string>();
  const queries: string[] = [];
  const server = createServer({
    // TCP too, on the same port: an answer too long for UDP comes back truncated, and the
    // resolver asks again over TCP.
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      const name = question?.name.toLowerCase() ?? '';
      queries.push(name);
      if (silent.has(name)) return;
      if (failing.has(name)) response.header.rcode = Packet.RCODE.SERVFAIL;
      else if (!txt.has(name)) response.header.rcode = Packet.RCODE.NXDOMAIN;
      else if (question?.type === Packet.TYPE.TXT) {
        for (const data of txt.get(name)!) response.answers.push(Packet.createResourceFromQuestion(question, { ttl: 1, data }));
      }
      void send(response);
    },
  });
  const port = await freePort();
  await server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
  return { server: `127.0.0.1:${port}`, txt, failing, silent, queries, close: () => server.close() };
}

/**
 * Publishes the record GET /orgs/{orgId}/sso asks for `domain` (or `value` instead) and asks to
 * verify it: the answer of POST …/sso/domains/{domain}/verify.
 */
export async function publishAndVerify(s: TestServer, dns: TestDns, domain: string, options: { orgId?: string; token?: string; value?: string } = {}): Promise<TestResponse> {
  const orgId = options.orgId ?? s.tenants.a.orgId;
  const token = options.token === undefined ? {} : { token: options.token };
  const config = await s.request('GET', `/orgs/${orgId}/sso`, token);
  assert.equal(config.status, 200, config.text);
  const state = (config.body.email_domains as Array<{ domain: string; dns_record?: { name: string; value: string } }>).find((d) => d.domain === domain);
  assert.ok(state?.dns_record, `${domain} is listed unverified: ${config.text}`);
  dns.txt.set(state.dns_record.name, [[options.value ?? state.dns_record.value]]);
  return s.request('POST', `/orgs/${orgId}/sso/domains/${domain}/verify`, token);
}
