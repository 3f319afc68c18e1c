import { badRequest } from '../errors/app-error.js';
import { parseScopes } from '../tokens/token-service.js';
import { scopes as allScopes } from '../auth/scopes.js';
import { mediaCommands } from '../media/cli.js';
import { monitorCommands } from '../monitors/cli.js';
import { auditCommands } from '../audit/cli.js';
import { eventsCommands } from '../events/cli.js';
import { listCommands } from './list-commands.js';
import { opt, orgOption, str, type Command } from '../app/command.js';
import { cliLogger } from '../kernel/cli-logger.js';
import { PublicUrls } from '../kernel/public-urls.js';
import type { AppContext } from '../app/context.js';
import { notFound } from '../errors/app-error.js';
import { dashboardService } from '../dashboard/capability.js';

export type { Command, CommandHelp, Flags, OptionSpec, Table } from '../app/command.js';

const org = orgOption;

/**
 * A one-time link (24 h) to set the user's dashboard password (docs/dashboard.md):
 * `<OPS_PUBLIC_URL or http://host:port>/dashboard/set-password#<link token>`; the token travels
 * in the fragment, so it never reaches a server log.
 */
async function passwordLink(ctx: AppContext, userId: string): Promise<{ set_password_url: string; set_password_expires_at: string }> {
  const { link_token, expires_at } = await dashboardService(ctx).issuePasswordLink(userId);
  const host = ctx.config.host === '0.0.0.0' || ctx.config.host === '::' ? 'localhost' : ctx.config.host;
  const base = (ctx.config.publicUrl || `http://${host.includes(':') ? `[${host}]` : host}:${ctx.config.port}`).replace(/\/+$/, '');
  return { set_password_url: `${base}/dashboard/set-password#${link_token}`, set_password_expires_at: expires_at };
}

/** A link for a user without a password yet; null for one who already signs in with theirs. */
async function firstPasswordLink(ctx: AppContext, userId: string): Promise<{ set_password_url: string | null; set_password_expires_at: string | null }> {
  if (await dashboardService(ctx).hasPassword(userId)) return { set_password_url: null, set_password_expires_at: null };
  return passwordLink(ctx, userId);
}

/** The extra commands capabilities add (media restore; monitor and channel commands). */
export const extraCommands: Command[] = [...mediaCommands, ...monitorCommands, ...auditCommands, ...eventsCommands];

/**
 * Naming in results: a top-level field that names another object is `<kind>_id` (org_id,
 * project_id, user_id, token_id) in every command; an object's own id inside a list is `id`.
 * `token create` and `token revoke` also keep `id` (DECISIONS.md §3 prints `{id, token}`).
 */
export const commands: Command[] = [
  {
    name: 'init',
    summary: "On an empty installation, create an organisation (plan free), its owner (--email, default owner@localhost), a project and an all-scopes live token; prints {org_id, project_id, user_id, email, token, token_id, set_password_url, set_password_expires_at}: open the one-time link (24 h) to set the owner's password, then sign in to the dashboard with that e-mail. Run again it changes nothing and says so (with the owner's e-mail).",
    options: {
      email: { type: 'string', value: 'EMAIL', description: "the owner's e-mail, which signs in to the dashboard (default owner@localhost)" },
    },
    async run(ctx, f) {
      const existing = await ctx.orgs.firstOrg();
      if (existing) {
        return { initialized: false, message: 'already initialised: nothing changed (the token is only shown once; create another with opsctl token create)', ...existing };
      }
      const email = (opt(f, 'email') ?? 'owner@localhost').trim().toLowerCase();
      const created = await ctx.orgs.createOrg({ name: 'Default organisation', plan: 'free', ownerEmail: email, ownerName: 'Owner' });
      const token = await ctx.tokens.create({
        tenant: { orgId: created.org_id, projectId: created.project_id, mode: 'live' },
        name: 'initial token',
        scopes: parseScopes('all'),
        expiresAt: null,
      });
      return { initialized: true, ...created, email, token: token.token, token_id: token.id, ...(await passwordLink(ctx, created.user_id)) };
    },
  },
  {
    name: 'org create',
    summary: 'Create an organisation with its system roles, its primary owner and a first project; prints {org_id, project_id, user_id}.',
    options: {
      name: { type: 'string', value: 'NAME', required: true, description: 'organisation name' },
      plan: { type: 'string', value: 'PLAN', required: true, description: 'plan of the catalogue (free, starter, pro, enterprise, or OPS_PLANS_FILE)' },
      'owner-email': { type: 'string', value: 'EMAIL', required: true, description: "primary owner's e-mail (an existing user is reused)" },
      'owner-name': { type: 'string', value: 'NAME', description: "primary owner's name (default: the e-mail's local part)" },
    },
    run: (ctx, f) =>
      ctx.orgs.createOrg({ name: str(f, 'name'), plan: str(f, 'plan'), ownerEmail: str(f, 'owner-email'), ownerName: opt(f, 'owner-name') }),
  },
  {
    name: 'org set-plan',
    summary: "Change an organisation's plan (its tokens see it at the next request); prints {org_id, plan}.",
    options: { org, plan: { type: 'string', value: 'PLAN', required: true, description: 'plan of the catalogue' } },
    async run(ctx, f) {
      await ctx.orgs.setPlan(str(f, 'org'), str(f, 'plan'));
      return { org_id: str(f, 'org'), plan: str(f, 'plan') };
    },
  },
  {
    name: 'project create',
    summary: 'Create a project in an organisation; prints {project_id}.',
    options: { org, name: { type: 'string', value: 'NAME', required: true, description: 'project name' } },
    run: (ctx, f) => ctx.orgs.createProject(str(f, 'org'), str(f, 'name')),
  },
  {
    name: 'member add',
    summary: "Add a user (created if new) to an organisation with a role; prints {user_id, set_password_url, set_password_expires_at}: a one-time link (24 h) to set the dashboard password, null when the user already has one.",
    options: {
      org,
      email: { type: 'string', value: 'EMAIL', required: true, description: "the member's e-mail address" },
      name: { type: 'string', value: 'NAME', description: "the member's name, for a new user (default: the e-mail's local part)" },
      role: { type: 'string', value: 'ROLE', required: true, description: 'role name: Owner, Admin, Developer or Viewer (see opsctl role list)' },
    },
    async run(ctx, f) {
      const added = await ctx.orgs.addMember({ orgId: str(f, 'org'), email: str(f, 'email'), name: opt(f, 'name'), role: str(f, 'role') });
      return { ...added, ...(await firstPasswordLink(ctx, added.user_id)) };
    },
  },
  {
    name: 'user reset-password',
    summary: "Print a new one-time link (24 h) to set a user's dashboard password; earlier links stop working, the current password works until the new one is set (which ends the user's sessions). Prints {user_id, email, set_password_url, set_password_expires_at}.",
    options: { email: { type: 'string', value: 'EMAIL', required: true, description: "the user's e-mail address" } },
    async run(ctx, f) {
      const user = await dashboardService(ctx).userByEmail(str(f, 'email'));
      if (!user) throw notFound(`no user has the e-mail address ${str(f, 'email')}`);
      return { user_id: user.id, email: user.email, ...(await passwordLink(ctx, user.id)) };
    },
  },
  {
    name: 'owner transfer',
    summary: 'Make a member the primary owner (and an Owner); prints {org_id, primary_owner_id}.',
    options: { org, to: { type: 'string', value: 'USER_ID', required: true, description: 'user id (usr_…) of a member of the organisation' } },
    async run(ctx, f) {
      await ctx.orgs.transferOwnership(str(f, 'org'), str(f, 'to'));
      return { org_id: str(f, 'org'), primary_owner_id: str(f, 'to') };
    },
  },
  {
    name: 'token create',
    summary: 'Create an API token for a project; prints {id, token_id, token}: the token is shown once, only its hash is kept.',
    options: {
      org,
      project: { type: 'string', value: 'ID', required: true, description: 'project id (ULID) of that organisation' },
      scopes: { type: 'string', value: 'LIST', required: true, description: `comma list of scopes, or all: ${allScopes.join(', ')}` },
      mode: { type: 'string', value: 'live|test', description: 'live (default) or test: test tokens see only test data' },
      name: { type: 'string', value: 'NAME', description: 'a label to tell tokens apart (default "opsctl token")' },
      expires: { type: 'string', value: 'ISO', description: 'expiry as an ISO 8601 date-time in the future (default: never)' },
    },
    async run(ctx, f) {
      const orgId = str(f, 'org');
      const projectId = str(f, 'project');
      const mode = opt(f, 'mode') ?? 'live';
      if (mode !== 'live' && mode !== 'test') throw badRequest('--mode must be live or test');
      const raw = str(f, 'scopes');
      const scopes = parseScopes(raw === 'all' ? 'all' : raw.split(',').map((s) => s.trim()).filter(Boolean));
      await ctx.orgs.projectOf(orgId, projectId);
      const created = await ctx.tokens.create({ tenant: { orgId, projectId, mode }, name: opt(f, 'name') ?? 'opsctl token', scopes, expiresAt: opt(f, 'expires') ?? null });
      return { id: created.id, token_id: created.id, token: created.token };
    },
  },
  {
    name: 'token revoke',
    summary: 'Revoke a token; a running server refuses it from its next request (SQLite; within OPS_AUTH_CACHE_MS on PostgreSQL). Prints {id, token_id, revoked}.',
    options: { id: { type: 'string', value: 'TOKEN_ID', required: true, description: 'token id (tok_…), as token create, token list and whoami print it' } },
    async run(ctx, f) {
      await ctx.tokens.revokeById(str(f, 'id'));
      return { id: str(f, 'id'), token_id: str(f, 'id'), revoked: true };
    },
  },
  ...listCommands,
  {
    name: 'purge',
    summary: "Run the purge and retention jobs now (what the server's background job does); prints what each removed.",
    options: {},
    async run(ctx) {
      // Loaded here: every other command starts faster without the modules' code.
      const { purgeModules } = await import('../modules.js');
      // Each module's purge in the table's order (src/modules.ts), on this command's context.
      return purgeModules({ config: ctx.config, clock: ctx.clock, log: cliLogger(ctx.config), urls: new PublicUrls(ctx.config), ctx });
    },
  },
];
