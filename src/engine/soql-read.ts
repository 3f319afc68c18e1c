/**
 * A parsed SOQL query run on a store's SQL reads (EventStore.soql): the store's dialect, the
 * query compiled to it (soql-compile.ts) against the hot-key layouts of the query's datasets,
 * restricted to the tenant's active datasets (and, for the monitors' window counts, to the
 * events loaded at given positions), and the rows decoded into the answer's values.
 *
 * The tenant never appears in the compiled filter: the store ANDs its own tenant condition
 * (`tenant = ?`, the engine's id for org, project and mode) around it.
 *
 * Hot payload keys: read from their typed columns where the rows have them
 * (duckdb/duckdb-soql-hot.ts, clickhouse/clickhouse-soql-hot.ts). On DuckDB a key may be read
 * from its column alone when the store's counts say no row of the query's datasets needs the
 * JSON (on ClickHouse, a `group by` key groups by the columns its types leave varying); if those
 * counts changed while the query ran (rows needing it may have been read), it runs again — the
 * third time with the JSON (every column) whatever the counts say, which is always exact.
 */
import { payloadPaths, type SoqlQuery } from '../soql/ast.js';
import { aggregateText, byItemText } from '../soql/print.js';
import type { CompiledFilter, EventStore, SoqlAnswer, SoqlRequest, SqlDialect, LoadedScope } from './event-store.js';
import type { Tenant } from '../tenancy/tenant.js';
import { loadedAt, loadedBetween } from './loaded-positions.js';
import { compileFilter, compileGroupKey, compileStats, dialectFalse, hotContext, hotReadsFor, stillHolds, withinDatasets, type AnyHotReads } from './soql-compile.js';
import { decodeGroupValue } from './soql-sql.js';

/** The reads a SOQL query is run with: what the store answers in SQL. */
export type SqlReads = Pick<EventStore, 'dialect' | 'hotLayouts' | 'query' | 'aggregate' | 'stats'>;

interface Run {
  query: SoqlQuery;
  datasetIds: ReadonlyMap<string, string>;
  names: ReadonlyMap<string, string>;
  dialect: SqlDialect;
  hot: AnyHotReads | undefined;
}

export async function readSoql(store: SqlReads, tenant: Tenant, request: SoqlRequest): Promise<SoqlAnswer> {
  const { query, now } = request;
  const datasetIds = new Map(request.datasets.map((d) => [d.name, d.id]));
  // The store would otherwise look the names of the page's datasets up again.
  const names = new Map(request.datasets.map((d) => [d.id, d.name]));
  const dialect = await store.dialect();
  if (!payloadPaths(query).length) return readOnce(store, tenant, request, { query, datasetIds, names, dialect, hot: undefined });
  const ids = [...datasetIds.values()];
  let layouts = await store.hotLayouts(tenant, ids);
  for (let attempt = 1; ; attempt++) {
    const hot = hotReadsFor(dialect, layouts, query, { now, datasetIds }, { withJson: attempt >= 3 });
    const answer = await readOnce(store, tenant, request, { query, datasetIds, names, dialect, hot });
    if (!('relied' in hot) || !hot.relied.size) return answer;
    layouts = await store.hotLayouts(tenant, ids);
    if (stillHolds(hot, layouts)) return answer;
  }
}

/** The events loaded at `upTo` and not at `after` (loaded-positions.ts); none when no log moved on between the two. */
function loadedFilter(loaded: LoadedScope, dialect: SqlDialect): CompiledFilter {
  if (!loaded.after) return loadedAt(loaded.upTo, dialect);
  return loadedBetween(loaded.after, loaded.upTo, dialect) ?? { where: dialectFalse(dialect), params: [] };
}

async function readOnce(store: SqlReads, tenant: Tenant, request: SoqlRequest, run: Run): Promise<SoqlAnswer> {
  const { query, datasetIds, names, dialect, hot } = run;
  const compiled = compileFilter(query, { now: request.now, datasetIds, ...hotContext(hot) }, dialect);
  const within = withinDatasets(compiled, [...datasetIds.values()], dialect);
  const extra = request.loaded ? loadedFilter(request.loaded, dialect) : undefined;
  const filter: CompiledFilter = extra ? { where: `${within.where} AND (${extra.where})`, params: [...within.params, ...extra.params], ...(extra.prewhere ? { prewhere: extra.prewhere } : {}) } : within;
  const lane = request.lane ? { lane: request.lane } : {};

  if (query.stats) {
    const stats = query.stats;
    const rows = await store.stats(tenant, { filter, ...lane, ...compileStats(stats, dialect, hot), limit: request.limit });
    return {
      kind: 'stats',
      stats: rows.map((row) => ({
        by: Object.fromEntries(
          stats.by.map((b, i) => {
            const raw = row.keys[i] ?? null;
            const value = b.kind === 'field' ? decodeGroupValue(b.field, raw, names) : raw === null ? null : new Date(Number(raw)).toISOString();
            return [byItemText(b), value];
          }),
        ),
        // A sum past the largest double is infinite, which JSON cannot carry: null.
        values: Object.fromEntries(stats.aggregates.map((a, i) => [aggregateText(a), finiteOrNull(row.values[i])])),
      })),
    };
  }

  if (query.groupBy) {
    const field = query.groupBy;
    const rows = await store.aggregate(tenant, { filter, ...lane, key: compileGroupKey(field, dialect, hot), limit: request.limit });
    return { kind: 'groups', groups: rows.map((r) => ({ value: decodeGroupValue(field, r.key, names), count: r.count })) };
  }

  const page = await store.query(tenant, { filter, ...lane, limit: request.limit, names, ...(request.after ? { after: request.after } : {}) });
  return { kind: 'events', page };
}

const finiteOrNull = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
