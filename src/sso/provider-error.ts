/**
 * A failure of a call to an identity provider, in words a person can act on, whose whole message
 * may be shown (an API answer, the sign-in page, the log). It never quotes what the provider
 * answered: a provider can be any address an Owner types, and its answer is not ours to repeat.
 */
export class ProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** Which call to the provider: each failure names it. */
export type ProviderCall = 'the discovery document' | 'the JWKS' | 'the token endpoint' | 'the provider';

/** One request that failed: which call, where, and why ("was refused: …", "answered HTTP 404", "did not answer within 5 s"). */
export class ProviderCallError extends ProviderError {
  constructor(readonly call: ProviderCall, readonly url: string, readonly reason: string) {
    super(`${call} (${url}) ${reason}`);
    this.name = 'ProviderCallError';
  }
}
