import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import type { Api } from '../http/types.js';
import { ApiEventSchema, EventPageWriter } from './event-shape.js';
import type { QueryService } from './query-service.js';
import { KeptAnswers, sameStamp } from './kept-answers.js';
import { payloadPaths, type SoqlQuery } from '../soql/index.js';
import { tenantKey } from '../tenancy/tenant.js';

const QueryBody = Type.Object(
  {
    q: Type.String({ description: 'one SOQL query (SOQL.md); the empty query matches every event' }),
    cursor: Type.Optional(Type.String({ maxLength: 4096, description: 'next_cursor of the previous page of this same query' })),
  },
  { additionalProperties: false },
);

const EventsResult = Type.Object(
  {
    events: Type.Array(ApiEventSchema, { description: 'newest first (ts desc, then event_id desc), at most 100' }),
    next_cursor: Type.String({ description: 'pass as `cursor` with the same q for the next page; "" when there is no more' }),
    has_more: Type.Boolean(),
  },
  { additionalProperties: false, description: 'events result (query without group by)' },
);

const GroupValue = Type.Union(
  [Type.String(), Type.Number(), Type.Boolean(), Type.Null(), Type.Object({}, { additionalProperties: true }), Type.Array(Type.Unknown())],
  {
    description:
      'the field value (severity and dataset as names, times as ISO); a payload value keeps its JSON type, objects and arrays ' +
      'included (grouped by their JSON text, keys in the order sent); null groups events without the field',
  },
);
const AggregationResult = Type.Object(
  {
    field: Type.String({ description: 'the group by field as written canonically (`source`, `payload.map`)' }),
    groups: Type.Array(Type.Object({ value: GroupValue, count: Type.Integer() }, { additionalProperties: false }), {
      description: 'at most 100 rows, by count descending, ties by value',
    }),
  },
  { additionalProperties: false, description: 'aggregation result (query with group by)' },
);

const StatsResult = Type.Object(
  {
    stats: Type.Array(
      Type.Object(
        {
          by: Type.Record(Type.String(), GroupValue, {
            description: 'each by-item as written canonically (`source`, `payload.map`, `bin(5m)`) → its value; a bin is the ISO time of its start',
          }),
          values: Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()]), {
            description: 'each aggregate as written canonically (`count()`, `p95(payload.ping)`) → its value; null when the group has no number for it',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'at most 1,000 rows: with a bin by bin ascending, else by the first aggregate descending; ties by the by-values' },
    ),
  },
  { additionalProperties: false, description: 'statistics result (query with stats; SOQL.md "Statistics")' },
);

const eventsHead = Buffer.from('{"events":[');

/** POST /query (scope logs:read). */
export function registerQueryRoutes(v1: Api, ctx: AppContext, queries: QueryService): void {
  const pages = new EventPageWriter();
  // Whole answers, kept while the tenant's events and datasets are unchanged (kept-answers.ts).
  const answers = new KeptAnswers<{ query: SoqlQuery; readsPayload: boolean }>();
  v1.post(
    '/query',
    {
      config: { scope: 'logs:read' },
      schema: {
        tags: ['datasets'],
        summary: 'Run a SOQL query: a page of events, a group-by count, or statistics',
        description:
          'Without `group by`: 100 events per page, newest first; pass `next_cursor` back as `cursor` with the same `q`. ' +
          'With `group by`: `{field, groups}`, the top 100 values by count. With `stats`: `{stats}`, at most 1,000 rows. ' +
          'Each request counts toward the `queries_month` quota.',
        body: QueryBody,
        response: { 200: Type.Union([EventsResult, AggregationResult, StatsResult]) },
      },
    },
    async (request, reply) => {
      const { tenant, plan } = requireAuth(request);
      const { q, cursor } = request.body;
      const key = KeptAnswers.key(tenantKey(tenant), q, cursor);
      // A kept answer's q parsed before (the same text parses the same): a bad query is refused before it is charged.
      const kept = answers.get(key);
      const parsed = kept ? kept.extra.query : queries.parse(q);
      await ctx.quotas.chargeQuery(tenant.orgId, plan);
      // Checked after the charge's wait, right before the bytes go: what a fresh run would answer now.
      const stamp = kept || queries.keepable(parsed, cursor) ? await queries.stamp(tenant) : undefined;
      if (kept && stamp && sameStamp(kept.stamp, stamp)) {
        if (kept.extra.readsPayload) queries.tellKeysUsed(parsed, stamp.active);
        return (reply as FastifyReply).type('application/json; charset=utf-8').send(kept.bytes);
      }
      const result = await queries.run(tenant, parsed, cursor);
      if (result.kind === 'stats') {
        // Like groups below: keys and values are bounded JSON values (decodeGroupValue, numbers).
        return (reply as FastifyReply).type('application/json; charset=utf-8').send(JSON.stringify({ stats: result.stats }));
      }
      if (result.kind === 'groups') {
        // Written here, like events below: the declared Union documents both shapes (serialising
        // through it would make the serializer validate each branch with Ajv first). Group
        // values are JSON values of bounded depth (decodeGroupValue), so this cannot throw; a
        // serializer set on the reply would also have been used for an error's body.
        return (reply as FastifyReply)
          .type('application/json; charset=utf-8')
          .send(JSON.stringify({ field: result.field, groups: result.groups }));
      }
      // Events are written as JSON directly (apiEventJson: the stored payload text is embedded,
      // not parsed and serialised again), each event's text kept by EventPageWriter for the next
      // page that holds it; bytes with a JSON content type are sent as they are. The typed reply
      // only takes the schema's object: these bytes are that object, written out.
      const tail = `],"next_cursor":${JSON.stringify(result.nextCursor)},"has_more":${result.hasMore}}`;
      const bytes = Buffer.concat([eventsHead, pages.write(result.events, tenant), Buffer.from(tail)]);
      if (stamp && queries.keepable(parsed, cursor)) answers.keep(key, { stamp, bytes, extra: { query: parsed, readsPayload: payloadPaths(parsed).length > 0 } });
      else if (kept) answers.drop(key);
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(bytes);
    },
  );
}
