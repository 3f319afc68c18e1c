import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import type { Tenant } from '../../tenancy/tenant.js';
import { severities, type StoredEvent } from './event-record.js';
import type {
  AggregateRequest,
  AppendResult,
  DatasetNameResolver,
  EventPage,
  EventPageRequest,
  EventStore,
  FieldStat,
  FieldStatsRequest,
  GroupRow,
  NewEvent,
  TailRequest,
} from './event-store.js';
import { EventStoreLockedError } from './event-store.js';

export { EventStoreLockedError };
import { GroupCommitWriter } from './duckdb-writer.js';
import { eventColumns, jsonPath, leafPaths, schemaSql, TenantIds, tenantWhere, toStoredEvent } from './duckdb-sql.js';

export interface DuckDbEventStoreOptions {
  /** Directory holding events.duckdb (OPS_DATA_DIR/events). */
  dir: string;
  names: DatasetNameResolver;
  now: () => number;
  /** DuckDB memory_limit (default 192MB, to keep the process well under 400 MB). */
  memoryLimit?: string;
  threads?: number;
}

/** The DuckDB settings of the event store (bench/ uses them for its same-run baselines). */
export function eventStoreSettings(tempDirectory: string, options: { memoryLimit?: string; threads?: number } = {}): Record<string, string> {
  return {
    memory_limit: options.memoryLimit ?? '192MB',
    threads: String(options.threads ?? 2),
    temp_directory: tempDirectory,
    // seq carries the order; without preserving it DuckDB inserts in parallel with less memory.
    preserve_insertion_order: 'false',
    // Each automatic checkpoint re-compresses the open row group and stalls the committing
    // writer for ~0.1–0.5 s. 32MB or 64MB means fewer stalls (+10–40% events/s in bench:ingest)
    // but committed rows wait uncompressed in memory: peak RSS went to 390–440 MB (goal < 400).
    wal_autocheckpoint: '16MB',
  };
}

/** Candidate payload paths examined by fieldStats (the leaves of the merged structure). */
const maxCandidatePaths = 400;
/** Recent events of the window the samples are drawn from. */
const sampleRows = 2_000;

export class DuckDbEventStore implements EventStore {
  private closed = false;
  /** The last queued deleteBefore; see there. */
  private deletes: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writerConnection: DuckDBConnection,
    private readonly writer: GroupCommitWriter,
    private readonly names: DatasetNameResolver,
    private readonly tenants: TenantIds,
  ) {}

  /** The value of `tenantWhere` for this tenant: tenancy is applied here and nowhere else. */
  private tenantParams(tenant: Tenant): DuckDBValue[] {
    return this.tenants.params(tenant);
  }

  static async open(options: DuckDbEventStoreOptions): Promise<DuckDbEventStore> {
    fs.mkdirSync(options.dir, { recursive: true });
    // Left by earlier versions, which staged each commit as an NDJSON file.
    fs.rmSync(path.join(options.dir, 'staging'), { recursive: true, force: true });
    const file = path.join(options.dir, 'events.duckdb');
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(file, eventStoreSettings(path.join(options.dir, 'tmp'), options));
    } catch (error) {
      if (/lock/i.test((error as Error).message)) throw new EventStoreLockedError(file, error);
      throw error;
    }
    const connection = await instance.connect();
    await connection.run(schemaSql);
    const max = await connection.runAndReadAll('SELECT coalesce(max(seq), 0) FROM events');
    const nextSeq = Number(max.getRows()[0]![0]) + 1;
    const tenants = new TenantIds();
    tenants.load((await connection.runAndReadAll('SELECT id, org_id, project_id, mode FROM event_tenants')).getRows());
    const writer = new GroupCommitWriter(connection, tenants, nextSeq, options.now);
    return new DuckDbEventStore(instance, connection, writer, options.names, tenants);
  }

  /** Runs one read on its own connection, so reads run in parallel with the writer. */
  private async read(sql: string, params: DuckDBValue[]): Promise<DuckDBValue[][]> {
    if (this.closed) throw new Error('event store closed');
    const connection = await this.instance.connect();
    try {
      const reader = await connection.runAndReadAll(sql, params);
      return reader.getRows();
    } finally {
      connection.closeSync();
    }
  }

  private async resolveNames(tenant: Tenant, rows: DuckDBValue[][], column: number, known?: ReadonlyMap<string, string>): Promise<ReadonlyMap<string, string>> {
    const ids = [...new Set(rows.map((r) => r[column] as string))];
    if (known && ids.every((id) => known.has(id))) return known;
    return ids.length ? this.names(tenant, ids) : new Map();
  }

  append(tenant: Tenant, events: readonly NewEvent[]): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    return this.writer.append(tenant, events);
  }

  async query(tenant: Tenant, request: EventPageRequest): Promise<EventPage> {
    const params: DuckDBValue[] = [...this.tenantParams(tenant), ...request.filter.params];
    let keyset = '';
    if (request.after) {
      keyset = ' AND (ts < ? OR (ts = ? AND event_id < ?::UUID))';
      params.push(request.after.ts, request.after.ts, request.after.event_id);
    }
    const rows = await this.read(
      `SELECT ${eventColumns} FROM events WHERE ${tenantWhere} AND (${request.filter.where})${keyset} ` +
        `ORDER BY ts DESC, event_id DESC LIMIT ${Math.trunc(request.limit) + 1}`,
      params,
    );
    const names = await this.resolveNames(tenant, rows, 1, request.names);
    const events = rows.slice(0, request.limit).map((r) => toStoredEvent(r, names));
    const last = events[events.length - 1];
    return { events, next: rows.length > request.limit && last ? { ts: last.ts, event_id: last.event_id } : undefined };
  }

  async aggregate(tenant: Tenant, request: AggregateRequest): Promise<GroupRow[]> {
    const { key } = request;
    let expression: string;
    if (key.kind === 'payload') {
      const p = jsonPath(key.path);
      expression = p ? `NULLIF(json_extract(payload, ${p})::VARCHAR, 'null')` : 'NULL::VARCHAR';
    } else {
      const column = key.name === 'dataset' ? 'dataset_id' : key.name;
      expression = key.name === 'event_id' ? 'event_id::VARCHAR' : column;
    }
    const rows = await this.read(
      `SELECT ${expression} AS value, count(*) AS n FROM events WHERE ${tenantWhere} AND (${request.filter.where}) ` +
        `GROUP BY 1 ORDER BY n DESC, value ASC NULLS LAST LIMIT ${Math.trunc(request.limit)}`,
      [...this.tenantParams(tenant), ...request.filter.params],
    );
    const names = key.kind === 'canonical' && key.name === 'dataset' ? await this.resolveNames(tenant, rows, 0, request.names) : undefined;
    return rows.map((r) => {
      const raw = r[0];
      let value: GroupRow['value'];
      if (raw === null || raw === undefined) value = null;
      else if (key.kind === 'payload') value = JSON.parse(raw as string) as GroupRow['value'];
      else if (key.name === 'severity') value = severities[Number(raw)] ?? null;
      else if (names) value = names.get(raw as string) ?? (raw as string);
      else if (typeof raw === 'bigint' || typeof raw === 'number') value = Number(raw);
      else value = raw as string;
      return { value, count: Number(r[1]) };
    });
  }

  async rollupCounts(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Map<string, number>> {
    const counts = new Map<string, number>(datasetIds.map((id) => [id, 0]));
    if (!datasetIds.length) return counts;
    const rows = await this.read(
      `SELECT dataset_id, sum(count) FROM events_rollup WHERE ${tenantWhere} AND minute >= ? ` +
        `AND dataset_id IN (${datasetIds.map(() => '?').join(', ')}) GROUP BY dataset_id`,
      [...this.tenantParams(tenant), Math.floor(sinceMs / 60_000), ...datasetIds],
    );
    for (const [id, n] of rows) counts.set(id as string, Number(n));
    return counts;
  }

  async fieldStats(tenant: Tenant, request: FieldStatsRequest): Promise<FieldStat[]> {
    const where = `${tenantWhere} AND dataset_id = ? AND ts >= ?`;
    const params: DuckDBValue[] = [...this.tenantParams(tenant), request.datasetId, request.sinceMs];
    const [structureRow] = await this.read(`SELECT json_group_structure(payload::JSON)::VARCHAR FROM events WHERE ${where}`, params);
    const structureText = structureRow?.[0] as string | null | undefined;
    if (!structureText) return [];
    const candidates = leafPaths(JSON.parse(structureText))
      .map((p) => ({ key: p.join('.'), path: jsonPath(p) }))
      .filter((c): c is { key: string; path: string } => c.path !== undefined)
      .slice(0, maxCandidatePaths);
    if (!candidates.length) return [];
    const extract = (p: string) => `NULLIF(json_extract(payload, ${p})::VARCHAR, 'null')`;
    const [counts] = await this.read(
      `SELECT ${candidates.map((c) => `approx_count_distinct(${extract(c.path)})`).join(', ')} FROM events WHERE ${where}`,
      params,
    );
    const ranked = candidates
      .map((c, i) => ({ ...c, cardinality: Number(counts?.[i] ?? 0) }))
      .sort((a, b) => b.cardinality - a.cardinality || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, request.maxKeys);
    const sampleExpr = (p: string) =>
      `array_slice(list(DISTINCT json_extract_string(payload, ${p})) FILTER (WHERE ${extract(p)} IS NOT NULL), 1, ${request.maxSamples})`;
    const [samples] = await this.read(
      `SELECT ${ranked.map((c) => sampleExpr(c.path)).join(', ')} FROM ` +
        `(SELECT payload FROM events WHERE ${where} ORDER BY seq DESC LIMIT ${sampleRows})`,
      params,
    );
    return ranked.map((c, i) => {
      const list = samples?.[i] as { items?: unknown[] } | null | undefined;
      const items = (list?.items ?? []).filter((v): v is string => typeof v === 'string').sort();
      return { key: c.key, cardinality: c.cardinality, samples: items.slice(0, request.maxSamples) };
    });
  }

  /**
   * One delete at a time: two purges (the background job and `opsctl purge`) deleting the same
   * rows at once make DuckDB refuse the second ("Conflict on tuple deletion"); queued, the
   * second finds nothing left to delete. A conflict with the writer's rollup merge is retried.
   */
  deleteBefore(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number> {
    const run = this.deletes.then(() => this.deleteBeforeNow(tenant, datasetId, beforeMs));
    this.deletes = run.catch(() => undefined);
    return run;
  }

  private async deleteBeforeNow(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number> {
    if (this.closed) throw new Error('event store closed');
    // Its own connection: DuckDB's MVCC lets the delete run beside the writer's appends.
    const connection = await this.instance.connect();
    try {
      const params: DuckDBValue[] = [...this.tenantParams(tenant), datasetId];
      for (let attempt = 1; ; attempt++) {
        try {
          await connection.run('BEGIN TRANSACTION');
          const result = await connection.run(`DELETE FROM events WHERE ${tenantWhere} AND dataset_id = ? AND ts < ?`, [...params, beforeMs]);
          await connection.run(`DELETE FROM events_rollup WHERE ${tenantWhere} AND dataset_id = ? AND minute < ?`, [
            ...params,
            Math.floor(beforeMs / 60_000),
          ]);
          await connection.run('COMMIT');
          return result.rowsChanged;
        } catch (error) {
          await connection.run('ROLLBACK').catch(() => undefined);
          if (attempt >= 5 || !/conflict/i.test((error as Error).message)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
        }
      }
    } finally {
      connection.closeSync();
    }
  }

  async readAfter(tenant: Tenant, request: TailRequest): Promise<StoredEvent[]> {
    const rows = await this.read(
      `SELECT ${eventColumns} FROM events WHERE ${tenantWhere} AND seq > ? AND (${request.filter.where}) ORDER BY seq LIMIT ${Math.trunc(request.limit)}`,
      [...this.tenantParams(tenant), request.afterSeq, ...request.filter.params],
    );
    const names = await this.resolveNames(tenant, rows, 1);
    return rows.map((r) => toStoredEvent(r, names));
  }

  async lastSeq(): Promise<number> {
    const [row] = await this.read('SELECT coalesce(max(seq), 0) FROM events', []);
    return Number(row?.[0] ?? 0);
  }

  async ping(): Promise<void> {
    await this.read('SELECT 1', []);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.writer.drain();
    this.closed = true;
    this.writerConnection.closeSync();
    this.instance.closeSync();
  }
}
