// The typed client of the public API (/v1), generated types from our OpenAPI document
// (schema.d.ts, `npm run api:types`). Every call carries the short-lived token of the chosen
// organisation, project and mode, fetched from the session and renewed before it expires.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { dashboardApi, type SessionToken, type Target } from './dashboard';
import { ApiError, errorFrom } from './errors';

/** Renew this long before expiry, so a request never leaves with a token about to lapse. */
const renewMarginMs = 60_000;

export class TokenSource {
  private current: { target: Target; token: SessionToken } | undefined;
  private pending: Promise<SessionToken> | undefined;
  /** Called when the session is gone (401 from the exchange): the page goes to sign-in. */
  onSignedOut: () => void = () => {};

  constructor(public target: Target | undefined) {}

  setTarget(target: Target | undefined): void {
    this.target = target;
    this.current = undefined;
    this.pending = undefined;
  }

  /** Forgets the current token: the next call fetches a new one. */
  invalidate(): void {
    this.current = undefined;
  }

  /** Scopes of the current token, once one was fetched. */
  get scopes(): string[] {
    return this.current?.token.scopes ?? [];
  }

  async token(): Promise<SessionToken> {
    const target = this.target;
    if (!target) throw new ApiError(0, 'no_project', 'choose an organisation and project first');
    const current = this.current;
    if (current && current.target === target && Date.parse(current.token.expires_at) - Date.now() > renewMarginMs) return current.token;
    this.pending ??= dashboardApi
      .token(target)
      .then((token) => {
        if (this.target === target) this.current = { target, token };
        return token;
      })
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 401) this.onSignedOut();
        throw error;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  /** Headers for a request made outside the typed client (live tail's stream). */
  async headers(): Promise<Record<string, string>> {
    return { authorization: `Bearer ${(await this.token()).token}` };
  }
}

export const tokens = new TokenSource(undefined);

/**
 * Every /v1 call carries the token. A 401 means the token ended before the page expected (the
 * browser's clock is off, or the server revoked it): the call is sent once more with a new one.
 */
const retryable = new Map<string, Request>();
const auth: Middleware = {
  async onRequest({ request, id }) {
    request.headers.set('authorization', `Bearer ${(await tokens.token()).token}`);
    retryable.set(id, request.clone());
    return request;
  },
  async onResponse({ response, id }) {
    const again = retryable.get(id);
    retryable.delete(id);
    if (response.status !== 401 || !again) return response;
    tokens.invalidate();
    again.headers.set('authorization', `Bearer ${(await tokens.token()).token}`);
    return fetch(again);
  },
  onError({ id }) {
    retryable.delete(id);
  },
};

export const api = createClient<paths>({ baseUrl: '' });
api.use(auth);

/**
 * The data of an openapi-fetch answer, or the API's error thrown as an ApiError.
 * `await data(api.GET('/v1/media', {}))`.
 */
export async function data<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(0, 'network', 'the server cannot be reached; check the connection and try again');
  }
  if (!result.response.ok) {
    const error = (result.error as { error?: Record<string, unknown> } | undefined)?.error;
    const retry = Number(result.response.headers.get('retry-after'));
    throw new ApiError(
      result.response.status,
      typeof error?.code === 'string' ? error.code : 'internal',
      typeof error?.message === 'string' ? error.message : `the server answered ${result.response.status}`,
      error ?? {},
      Number.isFinite(retry) && retry > 0 ? retry : undefined,
    );
  }
  return result.data as T;
}

/** A raw fetch to /v1 with the session's token (streams, uploads with progress). */
export async function authorizedFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  for (const [k, v] of Object.entries(await tokens.headers())) headers.set(k, v);
  const send = async () => {
    try {
      return await fetch(path, { ...init, headers });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ApiError(0, 'network', 'the server cannot be reached; check the connection and try again');
    }
  };
  let response = await send();
  if (response.status === 401) {
    // As in the typed client: the token ended sooner than the page expected; once more with a new one.
    tokens.invalidate();
    for (const [k, v] of Object.entries(await tokens.headers())) headers.set(k, v);
    response = await send();
  }
  if (!response.ok) throw await errorFrom(response);
  return response;
}
