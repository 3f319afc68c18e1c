import { badRequest } from '../errors/app-error.js';
import { checkHost } from '../outbound/address-policy.js';
import type { ChannelKind } from './notification.js';

/**
 * A channel's URL as accepted: absolute http(s), no credentials in it, and (unless private
 * addresses are allowed) a host whose addresses are all public. The worker checks the address
 * again at every connection (outbound/guarded-agent.ts): this check only spares users a channel that could
 * never deliver.
 */
export async function acceptChannelUrl(raw: string, allowPrivate: boolean): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('invalid body: field "url" must be an absolute http:// or https:// URL', { field: 'url' });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw badRequest(`invalid body: field "url" must be an http:// or https:// URL, not ${url.protocol}`, { field: 'url' });
  }
  if (url.username || url.password) throw badRequest('invalid body: field "url" must not carry a user name or password', { field: 'url' });
  if (!allowPrivate) {
    const reason = await checkHost(url.hostname);
    if (reason !== undefined) throw badRequest(`invalid body: field "url" is refused: ${reason} (notifications go to public addresses only)`, { field: 'url' });
  }
  return url.toString();
}

/**
 * What lists and GET show of a URL: Discord and Slack webhook URLs are secrets (anyone holding
 * one can post), so only their origin and the last four characters are shown; a webhook channel's
 * URL is shown whole (its requests are signed).
 */
export function shownUrl(kind: ChannelKind, url: string): string {
  if (kind === 'webhook') return url;
  try {
    const { origin } = new URL(url);
    return `${origin}/****${url.slice(-4)}`;
  } catch {
    return '****';
  }
}
