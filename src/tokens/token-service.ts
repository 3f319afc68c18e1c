import type { CompiledQuery, Kysely } from 'kysely';
import type { ApiTokensTable, Database } from '../stores/metadata/schema.js';
import type { MetadataStore } from '../stores/metadata/database.js';
import { precompileInsert } from '../stores/metadata/precompiled.js';
import type { Tenant } from '../tenancy/tenant.js';
import { scoped } from '../tenancy/scoped.js';
import { badRequest, forbidden, notFound, unauthorized } from '../errors/app-error.js';
import { isScope, scopes as allScopes, type Scope } from '../auth/scopes.js';
import { tokensOwnedBy, type ActingMember } from '../auth/role-policy.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import { newId } from '../shared/ids.js';
import { iso, type Clock } from '../shared/clock.js';
import { generateToken, hashToken, looksLikeToken } from '../auth/token-secret.js';
import type { Bus } from '../cluster/bus.js';
import type { RecordAnswer } from '../idempotency/keyed-request.js';
import { audit, inTenant, type AuditChange } from '../audit/record.js';

/** A token as listed: never the secret, never its hash. */
export interface TokenInfo {
  id: string;
  name: string;
  mode: 'live' | 'test';
  scopes: string[];
  last_four: string;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  /**
   * The member the token was created for in the dashboard (the user behind the session token,
   * or behind the token, that created it); null for tokens made by opsctl or an API token
   * that acts for nobody.
   */
  created_by_user_id: string | null;
}

/** Who asks: the token's tenant and scopes, and the member it acts for (src/auth/role-policy.ts). */
export interface TokenCaller {
  tenant: Tenant;
  scopes: ReadonlySet<Scope>;
  member?: ActingMember;
}

/** A token as `opsctl token list` shows it: any project of the installation, never the secret. */
export interface AdminTokenInfo extends TokenInfo {
  org_id: string;
  project_id: string;
}

/** Whom a token speaks for (`opsctl whoami`): never the secret. */
export interface TokenIdentity extends Omit<TokenInfo, 'id'> {
  token_id: string;
  org_id: string;
  org_name: string;
  plan: string;
  project_id: string;
  project_name: string;
}

export interface NewToken {
  tenant: Tenant;
  name: string;
  scopes: readonly Scope[];
  expiresAt: string | null;
  /** A dashboard session's short-lived token (src/dashboard): left out of the token lists. */
  sessionId?: string;
  /** The member it acts for: a session token's own user, or the member of the token that creates it. */
  createdByUserId?: string;
  /** Runs in the transaction that inserts the token (a keyed request's answer: src/idempotency). */
  within?: RecordAnswer<TokenInfo & { token: string }>;
}

export function parseScopes(list: readonly string[] | 'all'): Scope[] {
  if (list === 'all') return [...allScopes];
  const unknown = list.filter((s) => !isScope(s));
  if (unknown.length) throw badRequest(`unknown scope ${unknown.join(', ')}; known scopes: ${allScopes.join(', ')}`);
  if (list.length === 0) throw badRequest('a token needs at least one scope');
  return [...new Set(list as Scope[])];
}

const toInfo = (row: {
  id: string;
  name: string;
  mode: 'live' | 'test';
  scopes: string;
  last_four: string;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  created_by_user_id: string | null;
}): TokenInfo => ({ ...row, scopes: row.scopes.split(' ').filter(Boolean) });

/** Every column of a token's row: a creation's insert is compiled once (TokenService.insert). */
export const tokenColumns = [
  'id',
  'org_id',
  'project_id',
  'mode',
  'name',
  'token_hash',
  'last_four',
  'scopes',
  'expires_at',
  'revoked_at',
  'last_used_at',
  'created_at',
  'session_id',
  'created_by_user_id',
] as const satisfies ReadonlyArray<keyof ApiTokensTable>;

export class TokenService {
  private readonly db: Kysely<Database>;
  /**
   * A token's insert, built and compiled by Kysely once rather than on each creation (that cost
   * about what SQLite takes to run it).
   */
  private readonly insert: (row: ApiTokensTable) => CompiledQuery;

  constructor(
    private readonly metadata: Pick<MetadataStore, 'db' | 'writeAtomically'>,
    private readonly clock: Clock,
    /** Told of every revocation once it committed: every process's token cache drops the token. */
    private readonly bus: Pick<Bus, 'publish' | 'flush'>,
  ) {
    this.db = metadata.db;
    this.insert = precompileInsert(this.db, 'api_tokens', tokenColumns);
  }

  /** Creates a token; the returned secret is shown once and never stored. */
  async create(input: NewToken): Promise<TokenInfo & { token: string }> {
    if (input.expiresAt !== null) {
      const at = Date.parse(input.expiresAt);
      if (Number.isNaN(at)) throw badRequest('expires_at must be an ISO 8601 date-time');
      if (at <= this.clock.now()) throw badRequest('expires_at must be in the future');
    }
    const token = generateToken(input.tenant.mode);
    const row: ApiTokensTable = {
      id: newId.token(),
      org_id: input.tenant.orgId,
      project_id: input.tenant.projectId,
      mode: input.tenant.mode,
      name: input.name,
      token_hash: hashToken(token),
      last_four: token.slice(-4),
      scopes: input.scopes.join(' '),
      expires_at: input.expiresAt === null ? null : iso(Date.parse(input.expiresAt)),
      revoked_at: null,
      last_used_at: null,
      created_at: iso(this.clock.now()),
      session_id: input.sessionId ?? null,
      created_by_user_id: input.createdByUserId ?? null,
    };
    const created = { ...toInfo(row), token };
    const insert = this.insert(row);
    const within = input.within;
    // A dashboard session's own short-lived token is sign-in machinery, not a change anyone
    // made: the sign-in is what the audit log records (docs/audit.md).
    const change: AuditChange | undefined =
      input.sessionId === undefined
        ? {
            action: 'token.create',
            ...inTenant(input.tenant),
            mode: row.mode,
            target: { type: 'token', id: row.id },
            at: this.clock.now(),
            details: { name: row.name, scopes: created.scopes, expires_at: row.expires_at },
          }
        : undefined;
    if (within) {
      await this.db.transaction().execute(async (trx) => {
        await trx.executeQuery(insert);
        if (change) await audit.record(trx, change);
        await within(trx, created);
      });
    } else {
      // The token and its entry are the whole transaction: written at once, without Kysely's
      // transaction and its awaits (MetadataStore.writeAtomically).
      await this.metadata.writeAtomically(change ? [insert, audit.entry(this.db, change)] : [insert]);
    }
    return created;
  }

  /**
   * Creates a token for the caller's project, never with a scope the caller lacks; made with a
   * token that acts for a member, the new one acts for the same member (role-policy.ts).
   */
  async createFor(
    caller: TokenCaller,
    name: string,
    scopes: string[],
    mode: 'live' | 'test' | undefined,
    expiresAt: string | null,
    within?: NewToken['within'],
  ) {
    const wanted = parseScopes(scopes);
    const missing = wanted.filter((s) => !caller.scopes.has(s));
    if (missing.length) throw forbidden(`a token cannot grant scopes it does not hold: ${missing.join(', ')}`, { required_scope: missing[0] });
    const targetMode = mode ?? caller.tenant.mode;
    if (targetMode === 'live' && caller.tenant.mode === 'test') throw forbidden('a test-mode token cannot create live tokens');
    return this.create({ tenant: { ...caller.tenant, mode: targetMode }, name, scopes: wanted, expiresAt, createdByUserId: caller.member?.userId, within });
  }

  /**
   * Tokens of the caller's project and mode, newest first, revoked ones and the dashboard
   * sessions' short-lived tokens (docs/dashboard.md) left out; for a token acting for a
   * Developer, only the tokens made for that member (role-policy.ts).
   */
  async list(caller: Pick<TokenCaller, 'tenant' | 'member'>, page: PageRequest): Promise<TokenInfo[]> {
    let query = scoped(this.db, caller.tenant)
      .selectFrom('api_tokens')
      .select(['id', 'name', 'mode', 'scopes', 'last_four', 'expires_at', 'last_used_at', 'created_at', 'created_by_user_id'])
      .where('revoked_at', 'is', null)
      .where('session_id', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit + 1);
    const owner = tokensOwnedBy(caller.member);
    if (owner !== undefined) query = query.where('created_by_user_id', '=', owner);
    if (page.after) {
      query = query.where(keysetBefore('created_at', 'id', page.after));
    }
    return (await query.execute()).map(toInfo);
  }

  /**
   * Administrative list (opsctl) across tenants, optionally of one organisation and/or project,
   * both modes, newest first; revoked tokens and dashboard session tokens are left out as in GET /tokens.
   */
  async listAll(filter: { orgId?: string; projectId?: string }): Promise<AdminTokenInfo[]> {
    let query = this.db
      .selectFrom('api_tokens')
      .select(['id', 'name', 'org_id', 'project_id', 'mode', 'scopes', 'last_four', 'expires_at', 'last_used_at', 'created_at', 'created_by_user_id'])
      .where('revoked_at', 'is', null)
      .where('session_id', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc');
    if (filter.orgId !== undefined) query = query.where('org_id', '=', filter.orgId);
    if (filter.projectId !== undefined) query = query.where('project_id', '=', filter.projectId);
    return (await query.execute()).map((row) => ({ ...row, scopes: row.scopes.split(' ').filter(Boolean) }));
  }

  /**
   * Whom a token speaks for, checked as the API checks it: unknown, revoked or expired → 401
   * unauthorized with the API's messages. Reading it is not a use: last_used_at is not written.
   */
  async whoami(token: string): Promise<TokenIdentity> {
    if (!looksLikeToken(token)) throw unauthorized('not an API token: tokens look like ops_live_… or ops_test_…');
    const row = await this.db
      .selectFrom('api_tokens as t')
      .innerJoin('organisations as o', 'o.id', 't.org_id')
      .innerJoin('projects as p', 'p.id', 't.project_id')
      .select([
        't.id',
        't.name',
        't.org_id',
        'o.name as org_name',
        'o.plan',
        't.project_id',
        'p.name as project_name',
        't.mode',
        't.scopes',
        't.last_four',
        't.expires_at',
        't.revoked_at',
        't.last_used_at',
        't.created_at',
        't.created_by_user_id',
      ])
      .where('t.token_hash', '=', hashToken(token))
      .executeTakeFirst();
    if (!row) throw unauthorized('unknown token: it was never issued here (check OPS_DATA_DIR / OPS_DATABASE_URL)');
    if (row.revoked_at !== null) throw unauthorized('this token has been revoked');
    if (row.expires_at !== null && Date.parse(row.expires_at) <= this.clock.now()) throw unauthorized('this token has expired');
    return {
      token_id: row.id,
      name: row.name,
      org_id: row.org_id,
      org_name: row.org_name,
      plan: row.plan,
      project_id: row.project_id,
      project_name: row.project_name,
      mode: row.mode,
      scopes: row.scopes.split(' ').filter(Boolean),
      last_four: row.last_four,
      expires_at: row.expires_at,
      last_used_at: row.last_used_at,
      created_at: row.created_at,
      created_by_user_id: row.created_by_user_id,
    };
  }

  /**
   * Revokes a token of the caller's project and mode; a token acting for a Developer revokes
   * only tokens made for that member: another's is 404, as if it did not exist (role-policy.ts).
   */
  async revoke(caller: Pick<TokenCaller, 'tenant' | 'member'>, id: string): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      let update = scoped(trx, caller.tenant)
        .updateTable('api_tokens')
        .set({ revoked_at: iso(now) })
        .where('id', '=', id)
        .where('revoked_at', 'is', null);
      const owner = tokensOwnedBy(caller.member);
      if (owner !== undefined) update = update.where('created_by_user_id', '=', owner);
      const result = await update.executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) throw notFound(`token ${id} does not exist`);
      await audit.record(trx, { action: 'token.revoke', ...inTenant(caller.tenant), target: { type: 'token', id }, at: now });
    });
    await this.revoked(id);
  }

  /** Administrative revocation (opsctl), across tenants. */
  async revokeById(id: string): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      const result = await trx.updateTable('api_tokens').set({ revoked_at: iso(now) }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) throw notFound(`token ${id} does not exist or is already revoked`);
      const token = await trx.selectFrom('api_tokens').select(['org_id', 'project_id', 'mode']).where('id', '=', id).executeTakeFirstOrThrow();
      await audit.record(trx, {
        action: 'token.revoke',
        ...inTenant({ orgId: token.org_id, projectId: token.project_id, mode: token.mode }),
        target: { type: 'token', id },
        at: now,
      });
    });
    await this.revoked(id);
  }

  /**
   * After the revocation committed: this process's caches drop the token at once (the bus
   * delivers locally inside publish), and the answer waits until NATS has the message (bounded),
   * so a request another host receives after the answer is refused.
   */
  private async revoked(id: string): Promise<void> {
    this.bus.publish('token.revoked', { tokenId: id });
    await this.bus.flush();
  }
}
