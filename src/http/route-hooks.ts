/**
 * A route's own onRequest hooks as a list (Fastify takes one function or an array), for the
 * onRoute hooks that put a step before or after them (authentication, feature gates).
 */
export function ownOnRequest<Hook>(route: { onRequest?: Hook | Hook[] }): Hook[] {
  const own = route.onRequest;
  return own ? (Array.isArray(own) ? own : [own]) : [];
}
