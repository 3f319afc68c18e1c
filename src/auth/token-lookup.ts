import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { MetadataStore } from '../stores/metadata/database.js';
import type { AuthContext } from './auth-context.js';
import { unauthorized } from '../errors/app-error.js';
import { hashToken, looksLikeToken } from './token-secret.js';
import { isScope } from './scopes.js';
import { tokenOf } from './credentials.js';
import { iso, type Clock } from '../shared/clock.js';
import { precompile } from '../stores/metadata/precompiled.js';

const lastUsedEveryMs = 60_000;
const maxCached = 10_000;

interface TokenRow {
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  scopes: string;
  expires_at: string | null;
  revoked_at: string | null;
  plan: string;
  session_id: string | null;
  created_by_user_id: string | null;
  /** The role in the token's organisation of the user who created it (null when not a member). */
  member_role: string | null;
  token_name: string;
  /** The creating user's name (the actor of a dashboard session token). */
  user_name: string | null;
}

/** A looked-up token and the AuthContext built from it once (not on every request). */
interface Cached {
  row: TokenRow;
  auth: AuthContext;
  until: number;
  /** The database's change stamp when the row was read (SQLite; 0 on PostgreSQL). */
  stamp: number;
}

const toAuthContext = (row: TokenRow): AuthContext => {
  const auth: AuthContext = {
    tenant: { orgId: row.org_id, projectId: row.project_id, mode: row.mode },
    tokenId: row.id,
    scopes: new Set(row.scopes.split(' ').filter(isScope)),
    plan: row.plan,
    actor:
      row.session_id !== null && row.created_by_user_id !== null
        ? { type: 'user', id: row.created_by_user_id, name: row.user_name ?? '' }
        : { type: 'token', id: row.id, name: row.token_name },
  };
  if (row.created_by_user_id !== null) auth.member = { userId: row.created_by_user_id, role: row.member_role };
  return auth;
};

/**
 * Bearer token (or Basic / ApiKey carrying one: credentials.ts) → AuthContext. One indexed lookup (the token, its organisation's plan and, for
 * a dashboard session token, its member's role now) per request; `last_used_at` is written at
 * most once a minute per token so a busy client does not turn every read into a write.
 *
 * A looked-up token is cached for at most `cacheMs`. On SQLite it is trusted only while the
 * metadata change stamp (MetadataStore.changeStamp: one pread of the wal-index header, the
 * check ReadMostlyCache makes) is the one it was read under: a revocation or plan change by any
 * process, opsctl included, is seen by the next request, which reads the row again (one indexed
 * lookup). On PostgreSQL, where other hosts write unseen, the bus (OPS_NATS_URL: token.revoked,
 * org.changed, published after the change commits; build-api.ts subscribes) drops a changed
 * token from every process's cache; while the bus is down or off, `cacheMs` alone bounds how
 * stale it is.
 */
export class TokenLookup {
  private readonly lastUsedWritten = new Map<string, number>();
  /** hash → row, for `cacheMs`; the row's expiry is still checked on every request. */
  private readonly cache = new Map<string, Cached>();
  private readonly hashById = new Map<string, string>();
  /** Moves on every invalidation (forget, forgetOrg): a read in flight across one is not cached. */
  private invalidations = 0;
  /** Compiled once: building the query cost more than running it, on every request. */
  private readonly lookup: ReturnType<TokenLookup['compileLookup']>;

  private readonly db: Kysely<Database>;
  /** Moves on every write to the database by anyone; undefined where that cannot be seen (PostgreSQL). */
  private readonly changeStamp: (() => number) | undefined;

  constructor(
    metadata: Pick<MetadataStore, 'db' | 'changeStamp'>,
    private readonly clock: Clock,
    private readonly onBackgroundError: (error: unknown) => void,
    /**
     * How long a looked-up token is trusted at most without asking the database again.
     * A revocation or plan change announced on the bus drops it at once (`forget`, `forgetOrg`);
     * on SQLite so does any write by another process (the change stamp); otherwise (PostgreSQL
     * with the bus down or off) a change by another process takes effect within this time.
     */
    private readonly cacheMs = 1_000,
  ) {
    this.db = metadata.db;
    this.changeStamp = metadata.changeStamp;
    // In the constructor body: a field initializer would run before `db` is assigned (ES2022 class fields).
    this.lookup = this.compileLookup();
  }

  /**
   * The caller's AuthContext; synchronous for a cached token (the common case: no promise and
   * no microtask turn per request), a promise when the database must be asked. Throws or
   * rejects with 401.
   */
  authenticate(header: string | undefined): AuthContext | Promise<AuthContext> {
    const token = tokenOf(header);
    if (token === undefined) throw unauthorized('missing or invalid authorization token: send "Authorization: Bearer <API_TOKEN>"');
    if (!looksLikeToken(token)) throw unauthorized();
    const hash = hashToken(token);
    const cached = this.cache.get(hash);
    // Synchronous for a cached token: a clock read and, on SQLite, one pread of the stamp.
    if (cached && cached.until > performance.now() && (this.changeStamp === undefined || cached.stamp === this.changeStamp())) {
      return this.admit(cached);
    }
    return this.load(hash).then((found) => this.admit(found));
  }

  private admit(found: Cached | undefined): AuthContext {
    if (!found) throw unauthorized();
    const { row, auth } = found;
    const now = this.clock.now();
    if (row.revoked_at !== null) throw unauthorized('this token has been revoked');
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now) throw unauthorized('this token has expired');
    // A session token whose member left the organisation (the removal revokes it too; this
    // holds if that failed). Tokens a member created outlive the membership (DECISIONS.md §12).
    if (row.session_id !== null && auth.member?.role == null) {
      throw unauthorized('this dashboard token is no longer valid: its user is not a member of this organisation any more');
    }
    this.touch(row.id, now);
    return auth;
  }

  private async load(hash: string): Promise<Cached | undefined> {
    // Taken before the read: a write that lands while the read waits leaves the entry under an
    // older stamp, so the next request reads again rather than trusting what may predate it.
    const stamp = this.changeStamp?.() ?? 0;
    // Likewise for invalidations from the bus: one that arrives while the read is in flight
    // may be about this row as it was read, so the row is used for this request only.
    const invalidations = this.invalidations;
    const row: TokenRow | undefined = (await this.db.executeQuery(this.lookup({ hash }))).rows[0];
    if (!row) return undefined;
    const found: Cached = { row, auth: toAuthContext(row), until: performance.now() + this.cacheMs, stamp };
    // Unknown tokens are not cached: a token created a moment ago elsewhere must work at once.
    if (this.cacheMs > 0 && invalidations === this.invalidations) {
      if (this.cache.size >= maxCached) this.cache.clear();
      this.cache.set(hash, found);
      this.hashById.set(row.id, hash);
    }
    return found;
  }

  private compileLookup() {
    return precompile(
      (p) =>
        this.db
          .selectFrom('api_tokens')
          .innerJoin('organisations', 'organisations.id', 'api_tokens.org_id')
          // The creator's role now: a token made in the dashboard acts for its member (role-policy.ts).
          .leftJoin('memberships', (join) =>
            join.onRef('memberships.org_id', '=', 'api_tokens.org_id').onRef('memberships.user_id', '=', 'api_tokens.created_by_user_id'),
          )
          .leftJoin('roles', 'roles.id', 'memberships.role_id')
          .leftJoin('users', 'users.id', 'api_tokens.created_by_user_id')
          .select([
            'api_tokens.id',
            'api_tokens.org_id',
            'api_tokens.project_id',
            'api_tokens.mode',
            'api_tokens.scopes',
            'api_tokens.expires_at',
            'api_tokens.revoked_at',
            'organisations.plan',
            'api_tokens.session_id',
            'api_tokens.created_by_user_id',
            'roles.name as member_role',
            'api_tokens.name as token_name',
            'users.name as user_name',
          ])
          .where('api_tokens.token_hash', '=', p('hash')),
      ['hash'],
    );
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

  /** Forgets what is cached of a token (revoked, by this process or another: the bus's token.revoked). */
  forget(tokenId: string): void {
    this.invalidations++;
    this.lastUsedWritten.delete(tokenId);
    const hash = this.hashById.get(tokenId);
    if (hash) this.cache.delete(hash);
    this.hashById.delete(tokenId);
  }

  /** Forgets every cached token of an organisation (its plan changed: the bus's org.changed). */
  forgetOrg(orgId: string): void {
    this.invalidations++;
    for (const [hash, cached] of this.cache) {
      if (cached.row.org_id !== orgId) continue;
      this.cache.delete(hash);
      this.hashById.delete(cached.row.id);
    }
  }
}
