import { badRequest } from '../errors/app-error.js';
import { ownerRole } from '../auth/system-roles.js';

/** At most this many e-mail domains per organisation (a studio has a handful). */
export const maxEmailDomains = 20;

export interface SsoConfigInput {
  issuer: string;
  client_id: string;
  /** Absent on a change that keeps the stored secret. */
  client_secret?: string;
  email_domains: string[];
  default_role: string;
  enforce?: boolean;
}

export interface CheckedSsoConfig {
  issuer: string;
  client_id: string;
  client_secret?: string;
  email_domains: string[];
  default_role: string;
  enforce: boolean;
}

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * http is accepted only on a loopback host (a provider on the same machine: tests, a local
 * Keycloak); anywhere else the provider's answers must come over TLS, which is what lets the
 * client trust the issuer's keys.
 */
export const isLoopbackHttp = (url: URL): boolean => url.protocol === 'http:' && loopbackHosts.has(url.hostname);

/** The issuer as an absolute https URL without query or fragment, written as given (a trailing slash is part of an Issuer Identifier). */
export function checkIssuer(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer.trim());
  } catch {
    throw badRequest(`issuer "${issuer}" is not an absolute URL (e.g. https://accounts.google.com)`, { field: 'issuer' });
  }
  if (url.protocol !== 'https:' && !isLoopbackHttp(url)) {
    throw badRequest(`issuer must be an https URL (http only on localhost): got ${url.protocol}`, { field: 'issuer' });
  }
  if (url.search || url.hash || /[?#]/.test(issuer) || url.username || url.password) {
    throw badRequest('issuer must not carry a query, a fragment or credentials', { field: 'issuer' });
  }
  return issuer.trim();
}

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A domain name in lower case with at least two labels (`studio.example`), or a 400 naming it. */
export function checkDomain(domain: string): string {
  const lower = domain.trim().toLowerCase().replace(/^@/, '');
  const labels = lower.split('.');
  if (lower.length > 253 || labels.length < 2 || !labels.every((l) => label.test(l)) || /^\d+$/.test(labels[labels.length - 1]!)) {
    throw badRequest(`email_domains: "${domain}" is not a domain name (e.g. studio.example)`, { field: 'email_domains' });
  }
  return lower;
}

/** Checks a PUT body field by field (400 naming the first bad one); the role against the organisation's roles. */
export function checkSsoConfig(input: SsoConfigInput, roleNames: readonly string[]): CheckedSsoConfig {
  const issuer = checkIssuer(input.issuer);
  const clientId = input.client_id.trim();
  if (!clientId) throw badRequest('client_id must not be empty', { field: 'client_id' });
  if (input.client_secret !== undefined && !input.client_secret.trim()) throw badRequest('client_secret must not be empty', { field: 'client_secret' });
  if (input.email_domains.length === 0) throw badRequest('email_domains must name at least one domain (the part after @ of your members\' addresses)', { field: 'email_domains' });
  if (input.email_domains.length > maxEmailDomains) throw badRequest(`email_domains may name at most ${maxEmailDomains} domains`, { field: 'email_domains' });
  const domains = [...new Set(input.email_domains.map(checkDomain))];
  if (input.default_role === ownerRole) {
    throw badRequest('default_role cannot be Owner: members created by single sign-on get a lesser role, and an Owner promotes them', { field: 'default_role' });
  }
  if (!roleNames.includes(input.default_role)) {
    throw badRequest(`default_role "${input.default_role}" is not a role of this organisation (one of ${roleNames.filter((r) => r !== ownerRole).join(', ')})`, { field: 'default_role' });
  }
  return { issuer, client_id: clientId, client_secret: input.client_secret, email_domains: domains, default_role: input.default_role, enforce: input.enforce ?? false };
}

/** The domain of an e-mail address in lower case, or undefined when it is not one. */
export function domainOf(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return undefined;
  return email.slice(at + 1).trim().toLowerCase();
}
