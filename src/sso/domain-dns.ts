import { promises as dns } from 'node:dns';

/**
 * The DNS look-up of a domain's verification record (DECISIONS.md §22, docs/sso.md "Verify your
 * domains"): TXT records at one name, through Node's resolver (c-ares) and the servers of
 * OPS_DNS_SERVERS, or the system's when it is unset.
 */
export type TxtAnswer =
  /** The records found, each one's character-strings joined (RFC 7208 §3.3 reads them so). */
  | { kind: 'found'; records: string[] }
  /** The name does not exist, or holds no TXT record. */
  | { kind: 'none' }
  /** No answer could be had; `reason` is ours, in words, never what a server sent. */
  | { kind: 'failed'; reason: string };

export interface TxtLookupOptions {
  /** `ip[:port]` each; empty: the system's resolvers. */
  servers: readonly string[];
  /** The whole look-up gives up after this long (default 5 s). */
  timeoutMs?: number;
}

/**
 * At most this many records are compared with the token: a name that holds more is not one
 * an Owner set up for this (a DNS answer is itself bounded, 64 KiB over TCP).
 */
export const maxTxtRecords = 50;

const defaultTimeoutMs = 5_000;

const reasons: Record<string, string> = {
  ETIMEOUT: 'the DNS server did not answer in time',
  ESERVFAIL: 'the DNS server answered SERVFAIL: it could not resolve the name',
  EREFUSED: 'the DNS server refused the query',
  ECONNREFUSED: 'the DNS server could not be reached',
  EBADRESP: 'the DNS server sent an answer that could not be read',
  EBADNAME: 'the name is not one DNS can look up',
};

export async function lookupTxt(name: string, options: TxtLookupOptions): Promise<TxtAnswer> {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  // Two tries per server, each a share of the whole; the timer below bounds c-ares' own backoff.
  const resolver = new dns.Resolver({ timeout: Math.max(50, Math.floor(timeoutMs / 3)), tries: 2 });
  if (options.servers.length > 0) resolver.setServers([...options.servers]);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    resolver.cancel();
  }, timeoutMs);
  try {
    const records = await resolver.resolveTxt(name);
    return { kind: 'found', records: records.slice(0, maxTxtRecords).map((chunks) => chunks.join('')) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (timedOut) return { kind: 'failed', reason: `the DNS server did not answer within ${timeoutMs / 1000} s` };
    if (code === 'ENODATA' || code === 'ENOTFOUND') return { kind: 'none' };
    return { kind: 'failed', reason: reasons[code] ?? `the look-up failed (${/^E[A-Z]+$/.test(code) ? code : 'unknown error'})` };
  } finally {
    clearTimeout(timer);
  }
}
