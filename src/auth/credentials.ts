/**
 * The API token an Authorization header carries, in one of the schemes clients send
 * (DECISIONS §21): `Bearer <token>` (every client of ours), `Basic base64(<any user>:<token>)`
 * (log shippers with only a user and password to set: Promtail, Alloy, Fluent Bit, pino-loki,
 * winston-loki), and `ApiKey <token>` or `ApiKey base64(<id>:<token>)` (Elasticsearch clients:
 * the official client sends a string key as it is, Filebeat and Logstash send `id:key` in
 * base64). Undefined when the header holds none of these; whether the token exists is the
 * lookup's business.
 */
export function tokenOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^(Bearer|Basic|ApiKey)[ ]+(\S+)\s*$/i.exec(header);
  if (!match) return undefined;
  const scheme = match[1]!.toLowerCase();
  const value = match[2]!;
  if (scheme === 'bearer') return value;
  if (scheme === 'apikey' && value.startsWith('ops_')) return value;
  const decoded = fromBase64(value);
  if (decoded === undefined) return undefined;
  // Basic: the password; ApiKey: the key after the id (or the whole value when there is no id).
  const colon = decoded.indexOf(':');
  if (scheme === 'basic') return colon === -1 ? undefined : decoded.slice(colon + 1);
  return colon === -1 ? decoded : decoded.slice(colon + 1);
}

/** Strict standard base64 (padding optional) → UTF-8 text; undefined when it is not base64. */
function fromBase64(value: string): string | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length > 1024) return undefined;
  return Buffer.from(value, 'base64').toString('utf8');
}
