import type { Command } from '../app/command.js';
import { opt, orgOption, str } from '../app/command.js';
import { badRequest } from '../errors/app-error.js';
import { AuditService, type AuditEntry } from './audit-service.js';
import type { CursorKey } from '../pagination/cursor.js';
import { checkRange } from './routes.js';
import { auditActions } from './record.js';

const maxLimit = 1000;

/** `opsctl audit list`: an organisation's audit log, newest first, as the API shows it. */
export const auditCommands: Command[] = [
  {
    name: 'audit list',
    summary: "Print an organisation's audit log, newest first (at most --limit entries, default 100); prints {entries: [...]}.",
    options: {
      org: orgOption,
      actor: { type: 'string', value: 'ID', description: "only this actor's entries (usr_…, tok_…, an operator's account)" },
      action: { type: 'string', value: 'ACTION', description: 'only this action (token.revoke, member.role_change…)' },
      'target-id': { type: 'string', value: 'ID', description: 'only entries about this object' },
      from: { type: 'string', value: 'ISO', description: 'entries at or after this time' },
      to: { type: 'string', value: 'ISO', description: 'entries before this time' },
      limit: { type: 'string', value: 'N', description: `how many (1..${maxLimit}, default 100)` },
    },
    table: {
      list: 'entries',
      columns: [
        ['TIME', (e) => e.ts],
        ['ACTION', (e) => e.action],
        ['ACTOR', (e) => `${(e.actor as { type: string }).type}:${(e.actor as { name: string }).name}`],
        ['TARGET', (e) => (e.target as { id: string }).id],
        ['OUTCOME', (e) => e.outcome],
      ],
    },
    async run(ctx, f) {
      const orgId = str(f, 'org');
      await ctx.orgs.checkExists(orgId);
      const limit = Number(opt(f, 'limit') ?? 100);
      if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) throw badRequest(`--limit must be an integer from 1 to ${maxLimit}`);
      const action = opt(f, 'action');
      if (action !== undefined && !(auditActions as readonly string[]).includes(action)) {
        throw badRequest(`unknown --action ${action}; actions: ${auditActions.join(', ')}`);
      }
      const filter = { actor: opt(f, 'actor'), action, target_id: opt(f, 'target-id'), from: time(f, 'from'), to: time(f, 'to') };
      checkRange(filter);
      // Page after page: on SQLite a page may end short with more to come (a bound on the rows
      // it reads, audit-service.ts).
      const service = new AuditService(ctx.metadata.db, ctx.clock);
      const entries: AuditEntry[] = [];
      let after: CursorKey | undefined;
      do {
        const page = await service.list(orgId, filter, { limit: limit - entries.length, after });
        entries.push(...page.entries);
        after = page.next;
      } while (after && entries.length < limit);
      return { entries };
    },
  },
];

function time(f: Parameters<Command['run']>[1], name: string): string | undefined {
  const value = opt(f, name);
  if (value !== undefined && Number.isNaN(Date.parse(value))) throw badRequest(`--${name} must be an ISO 8601 time`);
  return value;
}
