import { Type } from '@sinclair/typebox';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { badRequest, notFound } from '../errors/app-error.js';
import { PageQuery } from '../pagination/page.js';
import { tenantKey } from '../tenancy/tenant.js';
import { DateTime } from '../http/schemas.js';
import { severities } from '../shared/event-record.js';
import type { EventsRuntime } from '../events/runtime.js';
import { LogsService } from './logs-service.js';

const Level = Type.Union(severities.map((s) => Type.Literal(s)), { description: 'debug, info, warn, error or fatal' });

export const LogEntrySchema = Type.Object(
  {
    id: Type.String({ description: 'log_ + ULID' }),
    level: Level,
    message: Type.String(),
    meta: Type.Object({}, { additionalProperties: true, description: 'free-form object (the event payload)' }),
    created_at: DateTime(),
  },
  { $id: 'LogEntry' },
);

/** SPEC.md §4.3 (announced; served with OPS_FEATURES containing `logs`). Entries are events of the dataset `logs`. */
export function registerLogRoutes(app: Api, ctx: AppContext, events: EventsRuntime): void {
  const logs = new LogsService(ctx, events);
  app.addSchema(LogEntrySchema);

  app.post(
    '/logs',
    {
      config: { scope: 'logs:write' },
      schema: {
        tags: ['logs'],
        summary: 'Write a log entry',
        description:
          'Stored as an event of the dataset `logs` (level → severity, meta → payload), so SOQL and live tail see it; ' +
          'counts toward `events_month` (402 quota_exceeded when used up). Answered once durable.',
        body: Type.Object(
          {
            level: Level,
            message: Type.String({ maxLength: 100_000 }),
            meta: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'free-form object' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref(LogEntrySchema) },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const { level, message, meta } = request.body;
      const entry = await logs.create(auth, level, message, (meta ?? {}) as Record<string, unknown>, (error) => request.log.error({ err: error }, 'log entry append failed'));
      return reply.code(201).send(entry);
    },
  );

  app.get(
    '/logs',
    {
      config: { scope: 'logs:read' },
      schema: {
        tags: ['logs'],
        summary: 'List log entries, newest first',
        description: '`level` matches that level exactly; `from` is inclusive and `to` exclusive.',
        querystring: Type.Composite([
          PageQuery,
          Type.Object({
            level: Type.Optional(Level),
            from: Type.Optional(DateTime('entries at or after this instant')),
            to: Type.Optional(DateTime('entries before this instant')),
          }),
        ]),
        response: { 200: Type.Object({ logs: Type.Array(Type.Ref(LogEntrySchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const { level, from, to } = request.query;
      const fromMs = from === undefined ? undefined : Date.parse(from);
      const toMs = to === undefined ? undefined : Date.parse(to);
      if (Number.isNaN(fromMs) || Number.isNaN(toMs)) throw badRequest('from and to must be ISO 8601 date-times');
      if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) throw badRequest('from must not be after to');
      // The cursor is bound to the tenant and to the list as filtered.
      const list = `logs:${level ?? ''}:${fromMs ?? ''}:${toMs ?? ''}`;
      const owner = tenantKey(tenant);
      const page = ctx.paginator.request(request.query, list, owner);
      let after;
      if (page.after) {
        const [ts, eventId] = page.after;
        if (typeof ts !== 'number' || typeof eventId !== 'string') throw badRequest('invalid cursor');
        after = { ts, event_id: eventId };
      }
      const result = await logs.list(tenant, { level, from: fromMs, to: toMs }, page.limit, after);
      const nextCursor = result.next ? ctx.cursors.encode(list, owner, [result.next.ts, result.next.event_id]) : '';
      return { logs: result.entries, next_cursor: nextCursor, has_more: result.next !== undefined };
    },
  );

  app.get(
    '/logs/:id',
    {
      config: { scope: 'logs:read' },
      schema: {
        tags: ['logs'],
        summary: 'One log entry',
        params: Type.Object({ id: Type.String({ maxLength: 64, description: 'log entry id (log_ + ULID)' }) }),
        response: { 200: Type.Ref(LogEntrySchema) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const entry = await logs.get(tenant, request.params.id);
      if (!entry) throw notFound(`no log entry ${request.params.id}`);
      return entry;
    },
  );
}
