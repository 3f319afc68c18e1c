// Every request to an identity provider: discovery, its keys, the token endpoint. Loaded with
// oidc.ts at the first use of single sign-on (it brings undici).
import { fetch, type Dispatcher } from 'undici';
import { AddressRefusedError } from '../outbound/address-policy.js';
import { ProviderCallError, type ProviderCall } from './provider-error.js';

/** Each request to a provider gives up after this long. */
export const providerTimeoutMs = 5_000;
/** The most of an answer read: discovery documents, key sets and token answers are a few KB. */
export const maxAnswerBytes = 1024 * 1024;

export interface ProviderRequest {
  method: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** openid-client's own deadline, if it gives one; ours applies as well. */
  signal?: AbortSignal;
}

/** The errors and causes under `error`, outermost first (fetch wraps the socket's in "fetch failed"). */
function chain(error: unknown): unknown[] {
  const list: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && list.length < 8; e = (e as { cause?: unknown }).cause) list.push(e);
  return list;
}

/** Why no answer came, in fixed words: the address policy's refusal, the deadline, or the socket's error code. */
function noAnswer(error: unknown, deadline: AbortSignal): string {
  const causes = chain(error);
  const refused = causes.find((e): e is AddressRefusedError => e instanceof AddressRefusedError);
  if (refused) return `was refused: ${refused.reason} (single sign-on calls identity providers at public addresses only)`;
  if (deadline.aborted || causes.some((e) => ['TimeoutError', 'AbortError'].includes((e as Error).name))) return `did not answer within ${providerTimeoutMs / 1000} s`;
  // Node's and OpenSSL's codes (ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED, UND_ERR_SOCKET) are fixed identifiers.
  const code = causes.map((e) => (e as { code?: unknown }).code).find((c): c is string => typeof c === 'string' && /^[A-Z][A-Z0-9_]{2,60}$/.test(c));
  return `could not be reached${code ? ` (${code})` : ''}`;
}

/** The answer's body, at most maxAnswerBytes. */
async function readAll(answer: Awaited<ReturnType<typeof fetch>>): Promise<Buffer | 'too large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  if (!answer.body) return Buffer.alloc(0);
  for await (const chunk of answer.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxAnswerBytes) {
      await answer.body.cancel().catch(() => {});
      return 'too large';
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/**
 * One request to a provider through the guarded dispatcher (src/outbound: the address policy at
 * every connection), within providerTimeoutMs, redirects never followed. Its answer must be JSON
 * (every answer of OpenID Connect's discovery, JWKS and token endpoint is): anything else fails
 * here, naming the call and the HTTP status and never quoting the body. With `expectOk`, any
 * status but 200 fails too (discovery and JWKS); the token endpoint's 4xx go on to openid-client,
 * whose OAuth error (`error`, `error_description`) is what the provider meant to say.
 *
 * Returns a Response holding the whole answer, for openid-client to read.
 */
export async function callProvider(dispatcher: Dispatcher, call: ProviderCall, url: string, request: ProviderRequest, expectOk: boolean): Promise<Response> {
  const deadline = AbortSignal.timeout(providerTimeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
  const fail = (reason: string) => new ProviderCallError(call, url, reason);
  let answer: Awaited<ReturnType<typeof fetch>>;
  try {
    answer = await fetch(url, { method: request.method, headers: request.headers, body: request.body as never, signal, dispatcher, redirect: 'manual' });
  } catch (error) {
    throw fail(noAnswer(error, deadline));
  }
  const { status } = answer;
  if (status >= 300 && status < 400) {
    await answer.body?.cancel().catch(() => {});
    throw fail(`answered HTTP ${status}, a redirect (redirects are not followed)`);
  }
  if (expectOk && status !== 200) {
    await answer.body?.cancel().catch(() => {});
    throw fail(`answered HTTP ${status}`);
  }
  let body: Buffer | 'too large';
  try {
    body = await readAll(answer);
  } catch (error) {
    throw fail(noAnswer(error, deadline));
  }
  if (body === 'too large') throw fail(`answered HTTP ${status} with more than ${maxAnswerBytes / 1024 / 1024} MB`);
  const text = body.toString('utf8');
  try {
    JSON.parse(text);
  } catch {
    throw fail(`answered HTTP ${status} with a body that is not JSON`);
  }
  const headers = new Headers();
  answer.headers.forEach((value, name) => headers.append(name, value));
  return new Response(text, { status, headers });
}
