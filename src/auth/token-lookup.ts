import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { AuthContext } from './auth-context.js';
import { unauthorized } from '../errors/app-error.js';
import { hashToken, looksLikeToken } from '../tokens/token-secret.js';
import { isScope } from './scopes.js';
import { iso, type Clock } from '../shared/clock.js';

const lastUsedEveryMs = 60_000;

/**
 * Bearer token → AuthContext. One indexed lookup per request; `last_used_at` is written at
 * most once a minute per token so a busy client does not turn every read into a write.
 */
export class TokenLookup {
  private readonly lastUsedWritten = new Map<string, number>();
  /** Compiled once: building the query cost more than running it, on every request. */
  private readonly lookup: ReturnType<TokenLookup['compileLookup']>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly onBackgroundError: (error: unknown) => void,
  ) {
    // In the constructor body: a field initializer would run before `db` is assigned (ES2022 class fields).
    this.lookup = this.compileLookup();
  }

  async authenticate(header: string | undefined): Promise<AuthContext> {
    const match = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw unauthorized('missing or invalid authorization token: send "Authorization: Bearer <API_TOKEN>"');
    const token = match[1]!;
    if (!looksLikeToken(token)) throw unauthorized();
    const query: typeof this.lookup = { ...this.lookup, parameters: [hashToken(token)] };
    const row = (await this.db.executeQuery(query)).rows[0];
    if (!row) throw unauthorized();
    const now = this.clock.now();
    if (row.revoked_at !== null) throw unauthorized('this token has been revoked');
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now) throw unauthorized('this token has expired');
    this.touch(row.id, now);
    return {
      tenant: { orgId: row.org_id, projectId: row.project_id, mode: row.mode },
      tokenId: row.id,
      scopes: new Set(row.scopes.split(' ').filter(isScope)),
      plan: row.plan,
    };
  }

  private compileLookup() {
    return this.db
      .selectFrom('api_tokens')
      .innerJoin('organisations', 'organisations.id', 'api_tokens.org_id')
      .select([
        'api_tokens.id',
        'api_tokens.org_id',
        'api_tokens.project_id',
        'api_tokens.mode',
        'api_tokens.scopes',
        'api_tokens.expires_at',
        'api_tokens.revoked_at',
        'organisations.plan',
      ])
      .where('api_tokens.token_hash', '=', '')
      .compile();
  }

  private touch(tokenId: string, now: number): void {
    const last = this.lastUsedWritten.get(tokenId) ?? 0;
    if (now - last < lastUsedEveryMs) return;
    this.lastUsedWritten.set(tokenId, now);
    this.db
      .updateTable('api_tokens')
      .set({ last_used_at: iso(now) })
      .where('id', '=', tokenId)
      .execute()
      .catch(this.onBackgroundError);
  }

  /** Drops the write throttle of a token (after revocation, say). */
  forget(tokenId: string): void {
    this.lastUsedWritten.delete(tokenId);
  }
}
