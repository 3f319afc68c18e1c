import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a cloud metadata service answers at /latest/meta-data/: text no answer of ours may repeat. */
export const metadataListing = 'ami-id\nhostname\ninstance-id\nlocal-ipv4\niam/security-credentials/\n';
/** What it answers under /json/: JSON, like its credentials document, just as secret. */
export const metadataCredentials = '{"Code":"Success","AccessKeyId":"ASIAMETADATASECRET","Token":"metadata-session-token"}';
/** Texts of those answers a test looks for in what the server said. */
export const metadataSecrets = ['ami-id', 'instance-id', 'local-ipv4', 'security-credentials', 'ASIAMETADATASECRET', 'metadata-session-token'];

export interface MetadataServer {
  url: string;
  port: number;
  /** The path of every request that reached it. */
  hits: string[];
  close(): Promise<void>;
}

/**
 * A loopback server answering every request (any method, any path) as a cloud metadata service
 * does — 200 with its listing — for the SSRF tests of each outbound call: with private addresses
 * refused nothing reaches it; allowed, nothing of its answer may come back to a tenant.
 */
export async function startMetadataServer(): Promise<MetadataServer> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '/');
    req.resume();
    if (req.url?.startsWith('/json/')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(metadataCredentials);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(metadataListing);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The metadata answers' texts found in `text` ([] when none). */
export const leakedMetadata = (text: string): string[] => metadataSecrets.filter((secret) => text.includes(secret));
