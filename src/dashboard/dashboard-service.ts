import { monotonicFactory } from 'ulidx';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Bus } from '../cluster/bus.js';
import type { Clock } from '../shared/clock.js';
import { iso } from '../shared/clock.js';
import { pooledRandom } from '../shared/ids.js';
import type { TokenService } from '../tokens/token-service.js';
import { AppError, badRequest, forbidden, notFound } from '../errors/app-error.js';
import type { Mode } from '../tenancy/tenant.js';
import type { Scope } from '../auth/scopes.js';
import { DashboardStore, type DashboardUser, type Preferences, type SessionRow } from './dashboard-store.js';
import { decoyHash, hashPassword, maxPasswordLength, minPasswordLength, newSecret, sha256, verifyPassword } from './passwords.js';
import { scopesOfRole } from '../auth/role-policy.js';
import { memorySignInLimiters, signInLimit, type SignInLimiters } from './sign-in-limiters.js';
import type { RequestOrigin } from '../tenancy/origin.js';
import type { AuditChange } from '../audit/record.js';


const ulid = monotonicFactory(pooledRandom);
const minute = 60_000;
const hour = 60 * minute;

/** DECISIONS.md §17 and docs/dashboard.md. */
export const dashboardTimings = {
  linkMs: 24 * hour,
  idleMs: 12 * hour,
  absoluteMs: 7 * 24 * hour,
  tokenMs: 15 * minute,
  /** A session's idle expiry is moved forward at most this often (not a write per request). */
  touchEveryMs: minute,
};

/**
 * Failed sign-in attempts allowed per e-mail address and per client address in each window
 * (more per address: several people may share one, behind a NAT or a proxy).
 */

/** The one answer for an unknown e-mail and a wrong password. */
const wrongCredentials = 'wrong e-mail or password';

/** 401 for the dashboard: a cookie session, so no `WWW-Authenticate: Bearer` challenge. */
export const signedOut = (message = 'not signed in: sign in with POST /dashboard/session'): AppError => new AppError('unauthorized', message);

export interface SessionInfo {
  user: { id: string; email: string; name: string };
  memberships: Array<{ org_id: string; org_name: string; role: string; projects: Array<{ project_id: string; name: string }> }>;
  preferences: Preferences | null;
}

export interface SessionToken {
  token: string;
  token_id: string;
  expires_at: string;
  scopes: Scope[];
}

/**
 * Why this user may not sign in with a password, or undefined when they may: single sign-on's
 * `enforce` (src/sso/enforce.ts), which the server hands to the dashboard it opens.
 */
export type PasswordSignInRefusal = (userId: string) => Promise<AppError | undefined>;

export interface DashboardDeps {
  db: Kysely<Database>;
  clock: Clock;
  tokens: TokenService;
  /** Revoked session tokens are announced: every process's token cache drops them. */
  bus: Pick<Bus, 'publish' | 'flush'>;
  /** Sign-in throttling; in process unless given (the server passes Redis's with OPS_REDIS_URL). */
  signInLimiters?: SignInLimiters;
  /**
   * Asked once a password matched. A service made without it (opsctl's links, single sign-on's
   * sessions) signs no one in with a password.
   */
  passwordSignInRefusal?: PasswordSignInRefusal;
}

/**
 * Sign-in, sessions and their short-lived tokens for the web dashboard. Secrets (link tokens,
 * session secrets) are returned once and stored only as SHA-256 hashes.
 */
export class DashboardService {
  readonly store: DashboardStore;
  private readonly clock: Clock;
  private readonly tokens: TokenService;
  private readonly bus: DashboardDeps['bus'];
  private readonly byEmail: SignInLimiters['byEmail'];
  private readonly byAddress: SignInLimiters['byAddress'];
  private readonly passwordSignInRefusal: PasswordSignInRefusal | undefined;

  constructor(deps: DashboardDeps) {
    this.store = new DashboardStore(deps.db);
    this.clock = deps.clock;
    this.tokens = deps.tokens;
    this.bus = deps.bus;
    this.passwordSignInRefusal = deps.passwordSignInRefusal;
    ({ byEmail: this.byEmail, byAddress: this.byAddress } = deps.signInLimiters ?? memorySignInLimiters());
  }

  private now(): number {
    return this.clock.now();
  }

  /** A one-time link token to set the user's password (24 h); earlier unused links stop working. */
  async issuePasswordLink(userId: string): Promise<{ link_token: string; expires_at: string }> {
    const linkToken = newSecret();
    const now = this.now();
    const expiresAt = iso(now + dashboardTimings.linkMs);
    await this.store.createLink({ id: `pwl_${ulid()}`, link_hash: sha256(linkToken), user_id: userId, created_at: iso(now), expires_at: expiresAt });
    return { link_token: linkToken, expires_at: expiresAt };
  }

  async hasPassword(userId: string): Promise<boolean> {
    return (await this.store.passwordHash(userId)) !== undefined;
  }

  userByEmail(email: string): Promise<DashboardUser | undefined> {
    return this.store.userByEmail(email);
  }

  /**
   * Whom a link is for, so its page can name the e-mail to sign in with: the address while the
   * link is usable, else undefined (unknown, used and expired alike). The link stays usable;
   * whoever holds it may set that user's password anyway, so the address tells them nothing more.
   */
  async passwordLinkEmail(linkToken: string): Promise<string | undefined> {
    return this.store.linkEmail(sha256(linkToken), iso(this.now()));
  }

  /** Sets the password from a link (single use); the user's sessions end. `request`: for the audit log. */
  async setPassword(linkToken: string, password: string, request?: RequestOrigin): Promise<{ user_id: string }> {
    checkPassword(password);
    const hash = await hashPassword(password);
    const used = await this.store.useLink(sha256(linkToken), iso(this.now()), hash, request);
    if (!used) throw badRequest('this link is unknown, already used or expired (links are valid 24 hours, once): ask for a new one (opsctl user reset-password)');
    await this.announce(used.revokedTokens);
    return { user_id: used.userId };
  }

  /**
   * Checks the attempt limits, then the credentials (an unknown e-mail costs the same scrypt
   * as a wrong password); starts a session. The secret is the cookie's value.
   */
  async signIn(email: string, password: string, request: RequestOrigin): Promise<{ user: DashboardUser; secret: string; expiresAt: number }> {
    const refusalOf = this.passwordSignInRefusal;
    if (!refusalOf) throw new Error('this dashboard service signs no one in with a password: it was made without single sign-on\'s check (openDashboard makes the one that has it)');
    const normalised = email.trim().toLowerCase();
    const clientAddress = request.ip;
    await this.throttle(normalised, clientAddress);
    const user = await this.store.userByEmail(normalised);
    const stored = user ? await this.store.passwordHash(user.id) : undefined;
    const matches = await verifyPassword(password.slice(0, maxPasswordLength), stored ?? (await decoyHash()));
    // The audit log names the e-mail given, never the password. An unknown e-mail belongs to no
    // organisation, so its refusals are in no organisation's log (docs/audit.md).
    const attempt = (outcome: 'success' | 'failure', found: DashboardUser) => ({
      action: 'user.sign_in' as const,
      origin: { ...request, actor: { type: 'user' as const, id: found.id, name: found.name } },
      target: { type: 'user', id: found.id },
      at: this.now(),
      outcome,
      details: { email: normalised, method: 'password' },
    });
    if (!user || !stored || !matches) {
      if (user) await this.store.recordRefused(user.id, attempt('failure', user));
      throw signedOut(wrongCredentials);
    }
    if (!(await this.store.hasMembership(user.id))) throw signedOut(wrongCredentials);
    await this.succeeded(normalised, clientAddress);
    const refusal = await refusalOf(user.id);
    if (refusal) {
      await this.store.recordRefused(user.id, attempt('failure', user));
      throw refusal;
    }
    return this.startSession(user, attempt('success', user));
  }

  /**
   * A new session for the user (password sign-in, single sign-on): its secret is the cookie's
   * value. `signIn` is the audit entry of the sign-in, written with the session.
   */
  async startSession(user: DashboardUser, signIn: Omit<AuditChange, 'orgId'>): Promise<{ user: DashboardUser; secret: string; expiresAt: number }> {
    const secret = newSecret();
    const now = this.now();
    const expiresAt = now + dashboardTimings.absoluteMs;
    await this.store.createSession({
      id: `ses_${ulid()}`,
      secret_hash: sha256(secret),
      user_id: user.id,
      created_at: iso(now),
      last_seen_at: iso(now),
      idle_expires_at: iso(Math.min(now + dashboardTimings.idleMs, expiresAt)),
      expires_at: iso(expiresAt),
    }, { ...signIn, at: now });
    return { user, secret, expiresAt };
  }

  /**
   * Every attempt takes one point of the e-mail's and of the client address's allowance before
   * the password is checked (parallel guesses are counted too); a successful sign-in gives
   * its points back, so only failures add up.
   */
  private async throttle(email: string, address: string): Promise<void> {
    const results = await Promise.allSettled([this.byEmail.consume(email), this.byAddress.consume(address)]);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (refused.length === 0) return;
    const waits = refused.map((r) => {
      if (r instanceof RateLimiterRes) return r.msBeforeNext;
      throw r;
    });
    const seconds = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    throw new AppError(
      'rate_limited',
      `too many failed sign-in attempts: at most ${signInLimit.perEmail} per e-mail address and ${signInLimit.perAddress} per client address in ${signInLimit.windowSeconds / 60} minutes; retry after ${seconds} s`,
      {},
      { 'Retry-After': String(seconds) },
    );
  }

  private async succeeded(email: string, address: string): Promise<void> {
    await Promise.allSettled([this.byEmail.reward(email, 1), this.byAddress.reward(address, 1)]);
  }

  /**
   * The session a cookie names, if it is alive and its user still a member somewhere; its idle
   * expiry moves forward. Throws 401 otherwise (an expired or orphaned session is ended).
   */
  async authenticate(secret: string | undefined): Promise<SessionRow> {
    if (!secret || secret.length > 100) throw signedOut();
    const session = await this.store.sessionBySecretHash(sha256(secret));
    if (!session) throw signedOut();
    const now = this.now();
    if (Date.parse(session.idle_expires_at) <= now || Date.parse(session.expires_at) <= now) {
      await this.announce(await this.store.endSession(session.id, iso(now)));
      throw signedOut('the session has expired: sign in again');
    }
    if (!(await this.store.hasMembership(session.user_id))) {
      await this.announce(await this.store.endSession(session.id, iso(now)));
      throw signedOut('the session has ended: this user is no longer a member of any organisation');
    }
    if (now - Date.parse(session.last_seen_at) >= dashboardTimings.touchEveryMs) {
      const idle = iso(Math.min(now + dashboardTimings.idleMs, Date.parse(session.expires_at)));
      await this.store.touchSession(session.id, iso(now), idle);
      session.last_seen_at = iso(now);
      session.idle_expires_at = idle;
    }
    return session;
  }

  async signOut(session: SessionRow): Promise<void> {
    await this.announce(await this.store.endSession(session.id, iso(this.now())));
  }

  async describe(session: SessionRow): Promise<SessionInfo> {
    const memberships = await this.store.memberships(session.user_id);
    const projects = await this.store.projectsOf(memberships.map((m) => m.org_id));
    let preferences: Preferences | null = (await this.store.preferences(session.user_id)) ?? null;
    // A choice that no longer holds (membership or project gone) is not offered.
    if (preferences && !memberships.some((m) => m.org_id === preferences!.org_id && projects.some((p) => p.id === preferences!.project_id && p.org_id === m.org_id))) {
      preferences = null;
    }
    return {
      user: { id: session.user_id, email: session.email, name: session.name },
      memberships: memberships.map((m) => ({
        ...m,
        projects: projects.filter((p) => p.org_id === m.org_id).map((p) => ({ project_id: p.id, name: p.name })),
      })),
      preferences,
    };
  }

  /** 403 unless a member of the organisation, 404 unless the project is one of its; the role. */
  private async roleFor(userId: string, orgId: string, projectId: string): Promise<string> {
    const role = await this.store.roleIn(userId, orgId);
    if (role === undefined) throw forbidden('you are not a member of this organisation');
    if (!(await this.store.projectInOrg(orgId, projectId))) throw notFound(`project ${projectId} does not exist in this organisation`);
    return role;
  }

  async setPreferences(session: SessionRow, preferences: Preferences): Promise<Preferences> {
    await this.roleFor(session.user_id, preferences.org_id, preferences.project_id);
    const value = { org_id: preferences.org_id, project_id: preferences.project_id, mode: preferences.mode };
    await this.store.setPreferences(session.user_id, value, iso(this.now()));
    return value;
  }

  /** A 15-minute token of the project and mode with the scopes of the member's role now, ending with the session. */
  async exchange(session: SessionRow, target: { org_id: string; project_id: string; mode: Mode }): Promise<SessionToken> {
    const role = await this.roleFor(session.user_id, target.org_id, target.project_id);
    const scopes = [...scopesOfRole(role)];
    const now = this.now();
    const expiresAt = iso(Math.min(now + dashboardTimings.tokenMs, Date.parse(session.expires_at)));
    const created = await this.tokens.create({
      tenant: { orgId: target.org_id, projectId: target.project_id, mode: target.mode },
      name: `dashboard session of ${session.email}`,
      scopes,
      expiresAt,
      sessionId: session.id,
      createdByUserId: session.user_id,
    });
    return { token: created.token, token_id: created.id, expires_at: expiresAt, scopes };
  }

  /**
   * A member's role changed or the member was removed: their session tokens of that
   * organisation stop working (the page asks for new ones, with the scopes of the new role);
   * with no membership left, their sessions end.
   */
  async membershipChanged(orgId: string, userId: string): Promise<void> {
    const now = iso(this.now());
    const revoked = await this.store.revokeMemberTokens(userId, orgId, now);
    if (!(await this.store.hasMembership(userId))) revoked.push(...(await this.store.endUserSessions(userId, now)));
    await this.announce(revoked);
  }

  purge(): Promise<{ sessions: number; links: number; tokens: number }> {
    return this.store.purge(iso(this.now()));
  }

  /** After the revocation committed: every process's token cache drops the tokens. */
  private async announce(tokenIds: string[]): Promise<void> {
    if (tokenIds.length === 0) return;
    for (const tokenId of tokenIds) this.bus.publish('token.revoked', { tokenId });
    await this.bus.flush();
  }
}

export function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < minPasswordLength) throw badRequest(`passwords need at least ${minPasswordLength} characters`, { field: 'password' });
  if (length > maxPasswordLength) throw badRequest(`passwords may have at most ${maxPasswordLength} characters`, { field: 'password' });
}
