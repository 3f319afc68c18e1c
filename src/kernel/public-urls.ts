import type { Config } from '../config/config.js';

/**
 * The addresses written into responses: file urls (OPS_CDN_URL) and the OpenAPI document's
 * server (OPS_PUBLIC_URL). Unset, each is the address its listener bound, which with port 0
 * (tests) is known only after listen: server.ts reports it through `bound`, and readers ask at
 * request time. The configuration itself stays as loaded.
 */
export class PublicUrls {
  private boundApi = '';
  private boundCdn = '';

  constructor(private readonly config: Pick<Config, 'publicUrl' | 'cdnUrl'>) {}

  /** Called once both listeners are bound (server.ts). */
  bound(addresses: { api: string; cdn: string }): void {
    this.boundApi = addresses.api;
    this.boundCdn = addresses.cdn;
  }

  /** The API's address; '' in opsctl when OPS_PORT is 0 and OPS_PUBLIC_URL unset. */
  get api(): string {
    return this.config.publicUrl || this.boundApi;
  }

  /** The delivery address; '' in opsctl when OPS_CDN_PORT is 0 and OPS_CDN_URL unset (urls are then relative). */
  get cdn(): string {
    return this.config.cdnUrl || this.boundCdn;
  }
}
