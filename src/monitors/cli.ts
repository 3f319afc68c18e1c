import type { AppContext } from '../app/context.js';
import { opt, orgOption, str, type Command, type Flags } from '../app/command.js';
import { badRequest } from '../errors/app-error.js';
import { iso } from '../shared/clock.js';
import type { Tenant } from '../tenancy/tenant.js';
import { conditionOps, toMonitorView, type ConditionOp, type MonitorInput, type MonitorKind } from './monitor.js';
import { checkDuration } from './durations.js';

/**
 * `opsctl monitor list|create|mute` and `opsctl channel list|test` (DECISIONS.md §18,
 * docs/monitors.md): what the API's monitor and channel routes do, for an operator on the
 * host, per organisation, project and mode. They write the metadata store the server reads: a
 * running server sees a new or muted monitor within its match cache's 5 s, and sends a channel
 * test from its outbox within its worker's second.
 */

const tenantOptions = {
  org: orgOption,
  project: { type: 'string', value: 'ID', required: true, description: 'project id (ULID) of that organisation' },
  mode: { type: 'string', value: 'live|test', description: 'live (default) or test' },
} as const;

async function tenantOf(ctx: AppContext, f: Flags): Promise<Tenant> {
  const orgId = str(f, 'org');
  const projectId = str(f, 'project');
  const mode = opt(f, 'mode') ?? 'live';
  if (mode !== 'live' && mode !== 'test') throw badRequest('--mode must be live or test');
  await ctx.orgs.projectOf(orgId, projectId);
  return { orgId, projectId, mode };
}

// Loaded when a command runs: every other opsctl command starts faster without them.
async function services(ctx: AppContext) {
  const [{ ChannelService }, { MonitorService }, { MonitorStatuses }, { GroupStore }, { Outbox }] = await Promise.all([
    import('../notifications/channel-service.js'),
    import('./monitor-service.js'),
    import('./status.js'),
    import('./group-store.js'),
    import('../notifications/outbox.js'),
  ]);
  const { db } = ctx.metadata;
  const channels = new ChannelService(db, ctx.clock, ctx.config.outboundAllowPrivate);
  const outbox = new Outbox(db);
  const statuses = new MonitorStatuses(ctx.clock, new GroupStore(db), { lastNotifiedOf: (tenant, ids) => outbox.lastOfMonitors(tenant, ids) });
  return { channels, monitors: new MonitorService(db, ctx.clock, ctx.plans, channels), statuses };
}

/** `--condition "> 5"`: an operator and a finite number. */
function parseCondition(text: string): { op: ConditionOp; value: number } {
  const match = /^\s*(>=|<=|==|>|<)\s*(\S+)\s*$/.exec(text);
  const value = match ? Number(match[2]) : NaN;
  if (!match || !Number.isFinite(value)) throw badRequest(`--condition must be an operator (${conditionOps.join(' ')}) and a number, e.g. "> 5"; got "${text}"`);
  return { op: match[1] as ConditionOp, value };
}

const all = 1_000_000;

export const monitorCommands: Command[] = [
  {
    name: 'monitor list',
    summary: "List a project's monitors (one mode), newest first, as GET /v1/monitors shows them; prints {monitors: [{id, name, kind, q, channel_ids, muted_until, …, status}]}.",
    options: tenantOptions,
    table: {
      list: 'monitors',
      columns: [
        ['ID', (r) => r.id],
        ['NAME', (r) => r.name],
        ['KIND', (r) => r.kind],
        ['Q', (r) => r.q],
        ['CHANNELS', (r) => (r.channel_ids as string[]).join(',')],
        ['MUTED UNTIL', (r) => r.muted_until],
        ['STATE', (r) => (r.status as { state: string }).state],
      ],
    },
    async run(ctx, f) {
      const tenant = await tenantOf(ctx, f);
      const { monitors, statuses } = await services(ctx);
      const rows = await monitors.list(tenant, { limit: all, after: undefined });
      const status = await statuses.of(tenant, rows);
      return { monitors: rows.map((r) => ({ ...toMonitorView(r), status: status.get(r.id)! })) };
    },
  },
  {
    name: 'monitor create',
    summary:
      "Create a threshold or match monitor, checked as POST /v1/monitors checks it (the organisation's plan caps the number); prints the monitor.",
    options: {
      ...tenantOptions,
      name: { type: 'string', value: 'NAME', required: true, description: 'monitor name (1–100 characters)' },
      kind: { type: 'string', value: 'threshold|match', required: true, description: 'threshold (a stats query on a schedule) or match (a filter on every ingested event)' },
      q: { type: 'string', value: 'SOQL', required: true, description: 'threshold: a stats query with one aggregate; match: a filter' },
      channel: { type: 'string', value: 'ID[,ID…]', required: true, description: 'channel ids of the same project and mode, comma-separated' },
      window: { type: 'string', value: 'DURATION', description: 'threshold: the window the query covers, 1m…24h' },
      every: { type: 'string', value: 'DURATION', description: 'threshold: evaluated this often, 1m…1h (default 1m)' },
      condition: { type: 'string', value: '"OP N"', description: 'threshold: e.g. "> 5" (operators > >= < <= ==)' },
      for: { type: 'string', value: 'DURATION', description: 'threshold: pending this long before firing (default 0s)' },
      'no-data': { type: 'string', value: 'ok|alerting', description: 'threshold: a group without a value (default ok)' },
      repeat: { type: 'string', value: 'DURATION', description: 'threshold: notified again this often while firing (default 4h)' },
      'group-window': { type: 'string', value: 'DURATION', description: 'match: later matches within it go out together, 1s…1h (default 60s)' },
    },
    async run(ctx, f) {
      const tenant = await tenantOf(ctx, f);
      const kind = str(f, 'kind');
      if (kind !== 'threshold' && kind !== 'match') throw badRequest('--kind must be threshold or match');
      const noData = opt(f, 'no-data');
      if (noData !== undefined && noData !== 'ok' && noData !== 'alerting') throw badRequest('--no-data must be ok or alerting');
      const condition = opt(f, 'condition');
      const input: MonitorInput = {
        name: str(f, 'name'),
        kind: kind as MonitorKind,
        q: str(f, 'q'),
        channel_ids: str(f, 'channel').split(',').map((c) => c.trim()).filter(Boolean),
        ...(opt(f, 'window') !== undefined && { window: opt(f, 'window') }),
        ...(opt(f, 'every') !== undefined && { every: opt(f, 'every') }),
        ...(condition !== undefined && { condition: parseCondition(condition) }),
        ...(opt(f, 'for') !== undefined && { for: opt(f, 'for') }),
        ...(noData !== undefined && { no_data: noData }),
        ...(opt(f, 'repeat') !== undefined && { repeat: opt(f, 'repeat') }),
        ...(opt(f, 'group-window') !== undefined && { group_window: opt(f, 'group-window') }),
      };
      const plan = await ctx.metadata.db.selectFrom('organisations').select('plan').where('id', '=', tenant.orgId).executeTakeFirstOrThrow();
      const { monitors } = await services(ctx);
      return toMonitorView(await monitors.create(tenant, plan.plan, input));
    },
  },
  {
    name: 'monitor mute',
    summary: 'Mute a monitor until a time (--until) or for a while (--for); --for 0s unmutes. Nothing is sent while muted; prints the monitor.',
    options: {
      ...tenantOptions,
      id: { type: 'string', value: 'MONITOR_ID', required: true, description: 'monitor id (mon_…)' },
      until: { type: 'string', value: 'DATE-TIME', description: 'muted until this ISO 8601 time' },
      for: { type: 'string', value: 'DURATION', description: 'muted this long from now, e.g. 2h (0s unmutes)' },
    },
    async run(ctx, f) {
      const tenant = await tenantOf(ctx, f);
      const until = opt(f, 'until');
      const forText = opt(f, 'for');
      if ((until === undefined) === (forText === undefined)) throw badRequest('give either --until or --for');
      let mutedUntil: string | null;
      if (until !== undefined) {
        if (Number.isNaN(Date.parse(until))) throw badRequest(`--until must be an ISO 8601 date-time; got "${until}"`);
        mutedUntil = new Date(until).toISOString();
      } else {
        const ms = checkDuration('--for', forText!, '0s', '365d');
        mutedUntil = ms === 0 ? null : iso(ctx.clock.now() + ms);
      }
      const { monitors } = await services(ctx);
      return toMonitorView(await monitors.update(tenant, str(f, 'id'), { muted_until: mutedUntil }));
    },
  },
  {
    name: 'channel list',
    summary: "List a project's notification channels (one mode), newest first, URLs of Discord and Slack masked; prints {channels: [{id, name, kind, url, enabled, disabled_reason, consecutive_failures, …}]}.",
    options: tenantOptions,
    table: {
      list: 'channels',
      columns: [
        ['ID', (r) => r.id],
        ['NAME', (r) => r.name],
        ['KIND', (r) => r.kind],
        ['URL', (r) => r.url],
        ['ENABLED', (r) => (r.enabled ? 'yes' : `no: ${String(r.disabled_reason)}`)],
        ['FAILURES', (r) => r.consecutive_failures],
      ],
    },
    async run(ctx, f) {
      const tenant = await tenantOf(ctx, f);
      const { channels } = await services(ctx);
      const { toChannelView } = await import('../notifications/channel-service.js');
      return { channels: (await channels.list(tenant, { limit: all, after: undefined })).map(toChannelView) };
    },
  },
  {
    name: 'channel test',
    summary:
      'Store a status "test" notification for a channel in the outbox (what POST /v1/channels/{id}/test does); a running server sends it within a second. Prints {delivery_id, channel_id}.',
    options: { ...tenantOptions, id: { type: 'string', value: 'CHANNEL_ID', required: true, description: 'channel id (ch_…)' } },
    async run(ctx, f) {
      const tenant = await tenantOf(ctx, f);
      const [{ NotificationService }, { Outbox }, { FilesRepo }, { PublicUrls }] = await Promise.all([
        import('../notifications/notification-service.js'),
        import('../notifications/outbox.js'),
        import('../media/files-repo.js'),
        import('../kernel/public-urls.js'),
      ]);
      const { channels } = await services(ctx);
      const notifications = new NotificationService(ctx.clock, channels, new Outbox(ctx.metadata.db), new FilesRepo(ctx.metadata), new PublicUrls(ctx.config));
      return notifications.sendTest(tenant, str(f, 'id'));
    },
  },
];
