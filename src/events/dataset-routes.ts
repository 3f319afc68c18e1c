import { Type } from '@sinclair/typebox';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { DateTime } from '../http/schemas.js';
import { severities } from '../shared/event-record.js';
import type { Tenant } from '../tenancy/tenant.js';
import { datasetNamePattern, type Dataset } from './dataset-service.js';
import type { EventsRuntime } from './runtime.js';
import { answerInCommit } from '../idempotency/index.js';
import { hotKeysOf, hotKeysView, type HotKeyEntry } from './hot-keys.js';

const Name = Type.String({ pattern: datasetNamePattern, description: 'dataset name' });
const Severity = Type.Union(severities.map((s) => Type.Literal(s)));
const HotType = Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean')]);
const HotKeyView = Type.Object({
  key: Type.String({ description: 'as it follows `payload.` in a query' }),
  type: HotType,
  pinned: Type.Boolean({ description: 'chosen by an operator (PATCH hot_keys); else chosen from schema discovery' }),
});
const HotKeys = Type.Array(HotKeyView, {
  description: 'payload keys also stored as typed columns for the events stored since they became hot: queries on them read no JSON (at most 32)',
});
const HotKeyPin = Type.Union([
  Type.String({ minLength: 1, maxLength: 512 }),
  Type.Object({ key: Type.String({ minLength: 1, maxLength: 512 }), type: HotType }, { additionalProperties: false }),
]);
const DatasetSummary = Type.Object(
  {
    name: Type.String(),
    retention_days: Type.Integer(),
    events_last_24h: Type.Integer({ description: 'from the per-minute rollup' }),
    default_severity: Type.Optional(Severity),
    hot_keys: Type.Optional(HotKeys),
    created_at: DateTime(),
  },
  { $id: 'DatasetSummary' },
);
const DatasetSchemaBody = Type.Object({
  dataset: Type.String(),
  canonical_fields: Type.Array(Type.Object({ name: Type.String(), type: Type.String() })),
  payload_fields: Type.Array(
    Type.Object({
      key: Type.String(),
      cardinality: Type.Integer(),
      samples: Type.Array(Type.String()),
      hot: Type.Optional(Type.Literal(true, { description: 'a hot key (hot_keys): stored as a typed column too' })),
    }),
    {
      description: 'from a sample of the newest events of the last 24 hours; cardinality is the distinct values in the sample',
    },
  ),
  hot_keys: HotKeys,
  sampled_events: Type.Integer({ description: 'events the payload fields were drawn from: the newest of the 24 hours, at most 2,000 and 2 MB of payload' }),
  payload_fields_truncated: Type.Boolean({
    description: 'true when discovery stopped at a bound: more than 1,000 distinct paths, or nesting deeper than 32 levels',
  }),
  generated_at: DateTime(),
});
const Retention = Type.Integer({ minimum: 1, maximum: 36_500 });
const NameParams = Type.Object({ name: Name });

const dayMs = 86_400_000;

const summaryOf = (d: Dataset, eventsLast24h: number, hot: readonly HotKeyEntry[] = hotKeysOf(d)) => ({
  name: d.name,
  retention_days: d.retention_days,
  events_last_24h: eventsLast24h,
  ...(d.default_severity ? { default_severity: d.default_severity as (typeof severities)[number] } : {}),
  ...(hot.length ? { hot_keys: hotKeysView(hot) } : {}),
  created_at: d.created_at,
});

/** GET/POST /datasets, PATCH/DELETE /datasets/{name}, GET /datasets/{name}/schema (ingest is src/ingest's). */
export async function registerDatasetRoutes(v1: Api, ctx: AppContext, events: EventsRuntime): Promise<void> {
  const { store, datasets, schemas, hotKeys } = events;
  v1.addSchema(DatasetSummary);
  const summaries = async (tenant: Tenant, list: readonly Dataset[]) => {
    const counts = await store.rollupCounts(tenant, list.map((d) => d.id), ctx.clock.now() - dayMs);
    return list.map((d) => summaryOf(d, counts.get(d.id) ?? 0));
  };

  v1.get(
    '/datasets',
    {
      config: { scope: 'logs:read' },
      schema: { tags: ['datasets'], summary: 'List the active datasets of this project', response: { 200: Type.Object({ datasets: Type.Array(Type.Ref(DatasetSummary)) }) } },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      return { datasets: await summaries(tenant, await datasets.listActive(tenant)) };
    },
  );

  v1.post(
    '/datasets',
    {
      config: { scope: 'logs:write', idempotency: 'body' },
      schema: {
        tags: ['datasets'],
        summary: 'Create a dataset',
        body: Type.Object({ name: Name, retention_days: Type.Optional(Retention), default_severity: Type.Optional(Severity) }, { additionalProperties: false }),
        response: { 201: Type.Ref(DatasetSummary) },
      },
    },
    async (request, reply) => {
      const { tenant, plan } = requireAuth(request);
      // With Idempotency-Key the answer commits with the dataset: a new dataset has no events yet.
      const record = await answerInCommit<ReturnType<typeof summaryOf>>(request, 201);
      let recorded: ReturnType<typeof summaryOf> | undefined;
      const within =
        record &&
        (async (db: Parameters<typeof record>[0], dataset: Dataset) => {
          const summary = summaryOf(dataset, 0);
          await record(db, summary);
          recorded = summary;
        });
      const created = await datasets.create(tenant, plan, request.body, within);
      return reply.code(201).send(recorded ?? (await summaries(tenant, [created]))[0]);
    },
  );

  v1.patch(
    '/datasets/:name',
    {
      config: { scope: 'logs:write' },
      schema: {
        tags: ['datasets'],
        summary: 'Rename a dataset, change its retention or default severity (events are kept), or pin its hot payload keys',
        description:
          '`hot_keys` replaces the pinned keys (`[]` unpins all): each a key as after `payload.` in a query, or `{key, type}` for a key ' +
          'the last 24 hours do not show yet. Keys chosen from schema discovery fill the rest, up to 32.',
        params: NameParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            retention_days: Type.Optional(Retention),
            default_severity: Type.Optional(Type.Union([Severity, Type.Null()])),
            hot_keys: Type.Optional(Type.Array(HotKeyPin, { maxItems: 32 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Ref(DatasetSummary) },
      },
    },
    async (request) => {
      const { tenant, plan } = requireAuth(request);
      const { hot_keys: items, ...patch } = request.body;
      if (!items) return (await summaries(tenant, [await datasets.update(tenant, plan, request.params.name, patch)]))[0];
      // Bad pins are a 400 before anything is written.
      const dataset = await datasets.getActive(tenant, request.params.name);
      const pins = await hotKeys.resolvePins(tenant, dataset, items, async () => (await schemas.schemaOf(tenant, dataset)).stats);
      const updated = await datasets.update(tenant, plan, request.params.name, patch);
      const hot = await hotKeys.pin(tenant, updated, pins);
      const counts = await store.rollupCounts(tenant, [updated.id], ctx.clock.now() - dayMs);
      return summaryOf(updated, counts.get(updated.id) ?? 0, hot);
    },
  );

  v1.delete(
    '/datasets/:name',
    {
      config: { scope: 'logs:write' },
      schema: {
        tags: ['datasets'],
        summary: 'Archive a dataset: it leaves the list, queries and tail; ingest to it answers 409',
        params: NameParams,
        response: { 200: Type.Object({ name: Type.String(), archived: Type.Literal(true), archived_at: DateTime() }) },
      },
    },
    async (request) => {
      const { tenant } = requireAuth(request);
      const archived = await datasets.archive(tenant, request.params.name);
      return { name: archived.name, archived: true as const, archived_at: archived.archived_at! };
    },
  );

  v1.get(
    '/datasets/:name/schema',
    {
      config: { scope: 'logs:read' },
      schema: {
        tags: ['datasets'],
        summary: 'Queryable fields of a dataset: canonical fields and payload keys of the last 24 hours',
        description: 'Cached per project and dataset; the `X-Cache` header says HIT or MISS.',
        params: NameParams,
        response: { 200: DatasetSchemaBody },
      },
    },
    async (request, reply) => {
      const { tenant } = requireAuth(request);
      const dataset = await datasets.getActive(tenant, request.params.name);
      const { schema, hit, stats } = await schemas.schemaOf(tenant, dataset);
      reply.header('X-Cache', hit ? 'HIT' : 'MISS');
      let hot = hotKeysOf(dataset);
      // A fresh sample may make keys hot; a failure there costs speed, never the answer.
      if (!hit) hot = await hotKeys.refresh(tenant, dataset, stats).catch((error: unknown) => (request.log.warn({ err: error }, 'hot keys: refresh failed'), hot));
      const hotText = new Set(hot.map((k) => k.path.join('.')));
      return {
        ...schema,
        payload_fields: schema.payload_fields.map((f) => (hotText.has(f.key) ? { ...f, hot: true as const } : f)),
        hot_keys: hotKeysView(hot),
      };
    },
  );
}
