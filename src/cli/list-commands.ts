import { opt, orgOption, str, type Command } from '../app/command.js';
import { scopes as allScopes } from '../auth/scopes.js';

const org = orgOption;
const role = (row: Record<string, unknown>) => (row.role as { name: string }).name;

/**
 * Reading commands: what the dashboard shows. Each prints one object holding one list (`--json`)
 * or a table. Members and roles have exactly the API's shape (SPEC.md §2.10, camelCase); the
 * administrative lists use the snake_case of the rest of opsctl and of GET /tokens.
 */
export const listCommands: Command[] = [
  {
    name: 'org list',
    summary: 'List every organisation, oldest first; prints {orgs: [{id, name, plan, primary_owner_id, created_at}]}.',
    options: {},
    table: { list: 'orgs', columns: [['ID', (r) => r.id], ['NAME', (r) => r.name], ['PLAN', (r) => r.plan], ['PRIMARY OWNER', (r) => r.primary_owner_id], ['CREATED', (r) => r.created_at]] },
    run: async (ctx) => ({ orgs: await ctx.orgs.listOrgs() }),
  },
  {
    name: 'project list',
    summary: "List projects, of one organisation or of all, oldest first; prints {projects: [{id, org_id, name, created_at}]}.",
    options: { org: { ...org, required: false, description: 'only the projects of this organisation (default: all)' } },
    table: { list: 'projects', columns: [['ID', (r) => r.id], ['ORG', (r) => r.org_id], ['NAME', (r) => r.name], ['CREATED', (r) => r.created_at]] },
    run: async (ctx, f) => ({ projects: await ctx.orgs.listProjects(opt(f, 'org')) }),
  },
  {
    name: 'token list',
    summary:
      'List tokens that are not revoked, both modes, newest first, never their secrets; prints {tokens: [{id, name, org_id, project_id, mode, scopes, last_four, expires_at, last_used_at, created_at, created_by_user_id}]}.',
    options: {
      org: { ...org, required: false, description: 'only the tokens of this organisation' },
      project: { type: 'string', value: 'ID', description: 'only the tokens of this project' },
    },
    table: {
      list: 'tokens',
      columns: [
        ['ID', (r) => r.id],
        ['NAME', (r) => r.name],
        ['MODE', (r) => r.mode],
        ['PROJECT', (r) => r.project_id],
        ['SCOPES', (r) => ((r.scopes as string[]).length === allScopes.length ? 'all' : r.scopes)],
        ['LAST FOUR', (r) => r.last_four],
        ['EXPIRES', (r) => r.expires_at],
        ['LAST USED', (r) => r.last_used_at],
      ],
    },
    async run(ctx, f) {
      const orgId = opt(f, 'org');
      const projectId = opt(f, 'project');
      if (orgId !== undefined && projectId !== undefined) await ctx.orgs.projectOf(orgId, projectId);
      else if (orgId !== undefined) await ctx.orgs.checkExists(orgId);
      return { tokens: await ctx.tokens.listAll({ orgId, projectId }) };
    },
  },
  {
    name: 'member list',
    summary: "List an organisation's members, newest first, as GET /orgs/{orgId}/members shows them; prints {members: [{id, name, email, avatar, role, joinedAt}]}.",
    options: { org },
    table: { list: 'members', columns: [['ID', (r) => r.id], ['NAME', (r) => r.name], ['EMAIL', (r) => r.email], ['ROLE', role], ['JOINED', (r) => r.joinedAt]] },
    async run(ctx, f) {
      const orgId = str(f, 'org');
      await ctx.orgs.checkExists(orgId);
      return { members: await ctx.members.listAll(orgId) };
    },
  },
  {
    name: 'role list',
    summary: "List an organisation's roles (the roleIds of PATCH /orgs/{orgId}/members/{userId}), as GET /orgs/{orgId}/roles shows them; prints {roles: [{id, name, isSystem}]}.",
    options: { org },
    table: { list: 'roles', columns: [['ID', (r) => r.id], ['NAME', (r) => r.name], ['SYSTEM', (r) => (r.isSystem ? 'yes' : 'no')]] },
    async run(ctx, f) {
      const orgId = str(f, 'org');
      await ctx.orgs.checkExists(orgId);
      return { roles: await ctx.members.roles(orgId) };
    },
  },
  {
    name: 'whoami',
    summary:
      'Whom a token speaks for: its id, organisation, project, mode, scopes and plan, never its secret; prints {token_id, name, org_id, org_name, plan, project_id, project_name, mode, scopes, last_four, expires_at, last_used_at, created_at, created_by_user_id}. Unknown, revoked or expired: exit 1.',
    options: { token: { type: 'string', value: 'TOKEN', required: true, description: 'the API token (ops_live_… or ops_test_…); checked as the API checks it' } },
    run: (ctx, f) => ctx.tokens.whoami(str(f, 'token')),
  },
];
