import type { AppContext } from '../app/context.js';
import { badRequest } from '../errors/app-error.js';
import { parseScopes } from '../tokens/token-service.js';
import { capabilities } from '../app/capabilities.js';
import { mediaCommands } from '../media/cli.js';

/** What a command receives: its parsed flags and a context on the same stores as the server. */
export type Flags = Record<string, string | boolean | undefined>;

export interface Command {
  /** e.g. "org create" */
  name: string;
  usage: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  required?: string[];
  run(ctx: AppContext, flags: Flags): Promise<object>;
}

const str = (flags: Flags, name: string): string => {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw badRequest(`--${name} is required`);
  return value;
};
const opt = (flags: Flags, name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);

/** The extra commands capabilities add (media restore, purge). */
export const extraCommands: Command[] = [...mediaCommands];

export const commands: Command[] = [
  {
    name: 'init',
    usage: 'opsctl init [--json]',
    options: {},
    async run(ctx) {
      if (!(await ctx.orgs.isEmpty())) {
        const existing = await ctx.orgs.firstOrg();
        return { initialized: false, message: 'already initialised: nothing changed (the token is only shown once; create another with opsctl token create)', ...existing };
      }
      const created = await ctx.orgs.createOrg({ name: 'Default organisation', plan: 'free', ownerEmail: 'owner@localhost', ownerName: 'Owner' });
      const token = await ctx.tokens.create({
        tenant: { orgId: created.org_id, projectId: created.project_id, mode: 'live' },
        name: 'initial token',
        scopes: parseScopes('all'),
        expiresAt: null,
      });
      return { initialized: true, ...created, token: token.token, token_id: token.id };
    },
  },
  {
    name: 'org create',
    usage: 'opsctl org create --name N --plan P --owner-email E [--owner-name N] [--json]',
    options: { name: { type: 'string' }, plan: { type: 'string' }, 'owner-email': { type: 'string' }, 'owner-name': { type: 'string' } },
    run: (ctx, f) =>
      ctx.orgs.createOrg({ name: str(f, 'name'), plan: str(f, 'plan'), ownerEmail: str(f, 'owner-email'), ownerName: opt(f, 'owner-name') }),
  },
  {
    name: 'org set-plan',
    usage: 'opsctl org set-plan --org ID --plan P [--json]',
    options: { org: { type: 'string' }, plan: { type: 'string' } },
    async run(ctx, f) {
      await ctx.orgs.setPlan(str(f, 'org'), str(f, 'plan'));
      return { org_id: str(f, 'org'), plan: str(f, 'plan') };
    },
  },
  {
    name: 'project create',
    usage: 'opsctl project create --org ID --name N [--json]',
    options: { org: { type: 'string' }, name: { type: 'string' } },
    run: (ctx, f) => ctx.orgs.createProject(str(f, 'org'), str(f, 'name')),
  },
  {
    name: 'member add',
    usage: 'opsctl member add --org ID --email E [--name N] --role ROLE_NAME [--json]',
    options: { org: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, role: { type: 'string' } },
    run: (ctx, f) =>
      ctx.orgs.addMember({ orgId: str(f, 'org'), email: str(f, 'email'), name: opt(f, 'name'), role: str(f, 'role') }),
  },
  {
    name: 'owner transfer',
    usage: 'opsctl owner transfer --org ID --to USER_ID [--json]',
    options: { org: { type: 'string' }, to: { type: 'string' } },
    async run(ctx, f) {
      await ctx.orgs.transferOwnership(str(f, 'org'), str(f, 'to'));
      return { org_id: str(f, 'org'), primary_owner_id: str(f, 'to') };
    },
  },
  {
    name: 'token create',
    usage: 'opsctl token create --org ID --project ID --scopes s1,s2|all [--mode live|test] [--name N] [--expires ISO] [--json]',
    options: { org: { type: 'string' }, project: { type: 'string' }, scopes: { type: 'string' }, mode: { type: 'string' }, name: { type: 'string' }, expires: { type: 'string' } },
    async run(ctx, f) {
      const orgId = str(f, 'org');
      const projectId = str(f, 'project');
      const mode = opt(f, 'mode') ?? 'live';
      if (mode !== 'live' && mode !== 'test') throw badRequest('--mode must be live or test');
      const raw = str(f, 'scopes');
      const scopes = parseScopes(raw === 'all' ? 'all' : raw.split(',').map((s) => s.trim()).filter(Boolean));
      await ctx.orgs.projectOf(orgId, projectId);
      const created = await ctx.tokens.create({ tenant: { orgId, projectId, mode }, name: opt(f, 'name') ?? 'opsctl token', scopes, expiresAt: opt(f, 'expires') ?? null });
      return { id: created.id, token: created.token };
    },
  },
  {
    name: 'purge',
    usage: 'opsctl purge [--json]',
    options: {},
    async run(ctx) {
      const result: Record<string, unknown> = {};
      for (const capability of capabilities) if (capability.purge) result[capability.name] = await capability.purge(ctx);
      return result;
    },
  },
  {
    name: 'token revoke',
    usage: 'opsctl token revoke --id tok_… [--json]',
    options: { id: { type: 'string' } },
    async run(ctx, f) {
      await ctx.tokens.revokeById(str(f, 'id'));
      return { id: str(f, 'id'), revoked: true };
    },
  },
];
