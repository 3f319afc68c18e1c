import { Readable } from 'node:stream';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { tenantKey, type Tenant } from '../../tenancy/tenant.js';
import { isUuid } from '../../shared/ids.js';
import type { StoredEvent } from '../../shared/event-record.js';
import {
  EventStoreResourceError,
  EventStoreUnavailableError,
  type AggregateRequest,
  type CompiledFilter,
  type CompiledGroupKey,
  type TwoStepGroup,
  type FieldStats,
  type FieldStatsRequest,
  type RawGroupRow,
  type RawStatsRow,
  type StatsRequest,
  type TailRequest,
  type ReadLane,
  statsSelect,
} from '../event-store.js';
import type { EnginePageRequest, EventEngine, LoadRecord } from '../engine.js';
import { BatchReader } from '../wal/event-batch.js';
import { discoverFields, fieldStatsLimits, sampleRange } from '../field-stats.js';
import { bindParams, type SqlValue } from './literal.js';
import { flattenPayload } from './payload-paths.js';
import { RowBinaryWriter } from './row-binary.js';
import { clickhouseEventColumns, duplicateColumnCode, mergeTreeTable, migrations, schemaTableDdl, type SchemaLayout } from './clickhouse-schema.js';
import { parseClickHouseUrl, type ClickHouseTarget } from '../../config/clickhouse-url.js';
import type { HotKey, HotLayout } from '../hot-columns.js';
import { ClickHouseHotLayouts } from './clickhouse-hot-layouts.js';
import { ClickHouseHotBackfill } from './clickhouse-hot-backfill.js';

/** The columns a read selects for a StoredEvent, in ClickHouse's JSON shapes (64-bit ints as text). */
const eventColumns = 'seq, log_id, dataset_id, event_id, ts, ingested_at, severity, event, actor, source, message, payload, bytes_raw';

/** The columns of a load's INSERT, in the order the RowBinary rows are written (load). */
const insertColumns = clickhouseEventColumns.map((c) => c.name).join(', ');

interface EventRow {
  seq: string;
  log_id: string;
  dataset_id: string;
  event_id: string;
  ts: string;
  ingested_at: string;
  severity: number;
  event: string;
  actor: string | null;
  source: string | null;
  message: string;
  payload: string;
  bytes_raw: number;
}

const toStoredEvent = (r: EventRow): StoredEvent => ({
  seq: Number(r.seq),
  log: r.log_id,
  dataset: r.dataset_id,
  event_id: r.event_id,
  ts: Number(r.ts),
  ingested_at: Number(r.ingested_at),
  severity: r.severity,
  event: r.event,
  actor: r.actor,
  source: r.source,
  message: r.message,
  payloadJson: r.payload,
  bytes_raw: r.bytes_raw,
});

const byteUnits: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** '192MB', '1GiB' (DuckDB's memory_limit notation) → bytes. */
export function parseBytes(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(text);
  if (!m) throw new Error(`"${text}" is not a size like 192MB`);
  return Math.round(Number(m[1]) * byteUnits[(m[2] ?? 'b').toLowerCase()]!);
}

/** ClickHouse error codes that mean "this read is too big for its bounds", not a fault. */
const resourceCodes = new Set(['158', '159', '160', '241', '307', '396']);

/**
 * Page windows: a page (newest first) first looks at the hour before its anchor, then at four
 * times as far back each time; the primary index (tenant, ts) skips everything older, so a page
 * of recent events reads only recent granules. The anchor is the tenant's newest event (or the
 * cursor's ts when older): anchored at "now", a tenant whose newest events are days old would
 * skip to a window holding all its rows. A window has no upper bound but the cursor, so it is
 * a suffix of the tenant's events in page order whatever the anchor: an anchor that is behind
 * (events loaded since by another process) makes a page slower, never wrong. The last window
 * is unbounded, so a page is always complete.
 */
const pageWindowsMs = [1, 4, 16, 64, 256, 1024].map((hours) => hours * 3_600_000).concat(Infinity);

/** How long a tenant's newest ts is trusted before asking again (cheap: only rows past it are read). */
const newestTsTtlMs = 10_000;

/**
 * A filter's SQL for ClickHouse. SOQL's ClickHouse dialect writes 1 and 0 itself; the store's
 * `matchAll` (live tail's catch-up read) is spelt `true`, which 18.16 does not read.
 */
const whereOf = (filter: CompiledFilter): string => {
  const w = filter.where.trim();
  return /^true$/i.test(w) ? '1' : /^false$/i.test(w) ? '0' : w;
};

/**
 * The `group by` statement over `table` with the rows of `where`, ordered and cut as
 * AggregateRequest says; `params` are the key's, bound before `where`'s. A key with `twoStep`
 * (a hot key: clickhouse-soql-hot.ts) is grouped by its columns first and its value
 * written once per such group, the counts of groups with the same value summed. A key narrowed
 * by assumed types also reads every grouped row's type (`key_types`, over all groups WITH
 * TOTALS, whatever the LIMIT); `check` says which types it assumed and the statement to run
 * instead when a row held another (runGroupBy).
 */
export function groupByStatement(
  table: string,
  key: CompiledGroupKey,
  where: string,
  limit: number,
): { sql: string; params: CompiledGroupKey['params']; check?: { bits: number; exactSql: string } } {
  const order = `ORDER BY n DESC, value ASC NULLS LAST LIMIT ${Math.trunc(limit)}`;
  const two = key.twoStep;
  if (!two) return { sql: `SELECT ${key.sql} AS value, count() AS n FROM ${table} WHERE ${where} GROUP BY value ${order}`, params: key.params };
  const steps = (group: TwoStepGroup, typeColumn?: string) =>
    `SELECT ${group.value} AS value, sum(key_count) AS n${typeColumn ? ', groupBitOr(key_types) AS key_types' : ''} ` +
    `FROM (SELECT ${group.columns.join(', ')}, count() AS key_count${typeColumn ? `, groupBitOr(bitShiftLeft(toUInt64(1), ${typeColumn})) AS key_types` : ''} ` +
    `FROM ${table} WHERE ${where} GROUP BY ${group.keys.join(', ')}) GROUP BY value${typeColumn ? ' WITH TOTALS' : ''} ${order}`;
  if (!two.assumed) return { sql: steps(two), params: [] };
  return { sql: steps(two, two.assumed.typeColumn), params: [], check: { bits: two.assumed.bits, exactSql: steps(two.assumed.exact) } };
}

/**
 * Runs a groupByStatement: with a `check`, through `readTotals` (the rows and the TOTALS row),
 * and again as its exact statement when the totals show a type outside the assumed ones.
 */
export async function runGroupBy<T>(
  statement: ReturnType<typeof groupByStatement>,
  params: readonly SqlValue[],
  read: (sql: string, params: readonly SqlValue[]) => Promise<T[]>,
  readTotals: (sql: string, params: readonly SqlValue[]) => Promise<{ data: T[]; totals?: Record<string, unknown> }>,
): Promise<T[]> {
  const check = statement.check;
  if (!check) return read(statement.sql, params);
  const { data, totals } = await readTotals(statement.sql, params);
  const seen = Number(totals?.['key_types'] ?? 0);
  return seen & ~check.bits ? read(check.exactSql, params) : data;
}

/**
 * Events in ClickHouse (one server, or a cluster of shards), behind the write-ahead log like
 * DuckDB: the loader (wal-loader.ts) hands it records in order, and it inserts each load as one
 * INSERT of thousands of rows. It runs in the events worker thread (engine-worker.ts), so row
 * building never runs on the HTTP event loop.
 *
 * Every API process is an ingester: each loads its own write-ahead log, named by
 * its log id (log-id.ts), into the same tables; no process stands between the others and
 * ClickHouse.
 *
 * Exactly once without transactions: ClickHouse 18.16 has neither transactions nor insert
 * deduplication tokens on plain MergeTree, and an INSERT through a Distributed table may land
 * on some shards and fail on others. So every row carries its (log id, seq), the log's loaded
 * position is written after the rows (`event_loaders`), and whenever a load may have
 * half-landed (at start, after any failed load) the engine asks which of its log's seqs past
 * the position are stored already and skips those when the records come again. (log id, seq)
 * is unique, so a record is stored once whatever failed where.
 *
 * Tenancy: every statement starts `tenant = ?` with the tenant's key, bound like every value
 * through literal.ts; SOQL's compiled filters never name the tenant.
 */
export class ClickHouseEngine implements EventEngine {
  private readonly clients: ClickHouseClient[];
  private readonly db: string;
  private readonly table: string;
  private readReplica = 0;
  private loaded = 0;
  /** Seqs past `loaded` stored by a load that may have half-landed; undefined when none are. */
  private present: Set<number> | undefined;
  /** A load failed: which of its rows landed is unknown until findPresent asks. */
  private presentUnknown = true;
  private deletes: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Per tenant key: a lower bound of its newest event's ts (page windows' anchor), and when it was checked. */
  private readonly newest = new Map<string, { ts: number; checkedAt: number }>();
  /** Hot payload keys' layouts and columns (opened after the migrations). */
  private hot!: ClickHouseHotLayouts;
  /** Fills the slot columns of rows stored before their dataset's current hot keys (clickhouse-hot-backfill.ts). */
  private backfill!: ClickHouseHotBackfill;

  private constructor(
    private readonly target: ClickHouseTarget,
    private readonly readMemoryBytes: number,
    /** The write-ahead log this engine loads (log-id.ts); '' is the one log from before log ids. */
    private readonly logId: string,
  ) {
    this.db = target.database;
    this.table = mergeTreeTable(target);
    this.clients = target.hosts.map((url) =>
      createClient({
        url,
        username: target.username,
        password: target.password,
        // Statements name the database; the client's default would need it to exist first.
        database: 'default',
        request_timeout: target.timeoutMs + 5_000,
        max_open_connections: 16,
        compression: { request: false, response: false },
        clickhouse_settings: { max_execution_time: Math.ceil(target.timeoutMs / 1000) },
        log: { level: 127 as never },
      }),
    );
  }

  /**
   * `memoryLimit` (the DuckDB engine's setting, e.g. '192MB') bounds each read here: ClickHouse's
   * max_memory_usage per query, so one tenant's huge group by fails alone (400) instead of
   * taking the server's memory.
   */
  static async open(url: string, options: { memoryLimit?: string; logId?: string; hotKeysIntervalMs?: number } = {}): Promise<ClickHouseEngine> {
    const engine = new ClickHouseEngine(parseClickHouseUrl(url), parseBytes(options.memoryLimit ?? '1GB'), options.logId ?? '');
    try {
      await engine.migrate();
      const statements = {
        clients: engine.clients,
        db: engine.db,
        table: engine.table,
        command: (client: ClickHouseClient, sql: string) => engine.command(client, sql),
        select: <T>(client: ClickHouseClient, sql: string, params: readonly SqlValue[]) => engine.select<T>(client, sql, params),
      };
      engine.hot = await ClickHouseHotLayouts.open({
        ...statements,
        cluster: engine.target.cluster,
        peerPositions: async () => {
          const positions = await engine.loadedPositions();
          delete positions[engine.logId];
          return positions;
        },
        // The other ingesters take a dataset's new keys at their next tick (two, to be sure), and
        // a load they had started before it lands within the few seconds after.
        graceMs: 2 * (options.hotKeysIntervalMs ?? 60_000) + 5_000,
      });
      engine.backfill = new ClickHouseHotBackfill(statements, engine.hot);
      return engine;
    } catch (error) {
      await engine.close();
      throw error;
    }
  }

  private get layout(): SchemaLayout {
    return { database: this.db, cluster: this.target.cluster };
  }

  /** Creates or upgrades the tables on every host (each host records its own version). */
  private async migrate(): Promise<void> {
    if (this.target.cluster) await this.checkShards();
    for (const client of this.clients) {
      await this.command(client, `CREATE DATABASE IF NOT EXISTS ${this.db}`);
      await this.command(client, schemaTableDdl(this.db));
      const [row] = await this.select<{ v: number }>(client, `SELECT toUInt32(max(version)) AS v FROM ${this.db}.ops_schema`, []);
      const current = row?.v ?? 0;
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        for (const statement of migration.statements(this.layout)) {
          try {
            await this.command(client, statement);
          } catch (error) {
            // Another process migrating at the same moment, or a crash between two statements, added it already.
            const added = /\bADD COLUMN\b/.test(statement) && new RegExp(`\\bCode: ${duplicateColumnCode}\\b`).test((error as Error).message);
            if (!added) throw error;
          }
        }
        await this.command(client, `INSERT INTO ${this.db}.ops_schema (version) VALUES (${migration.version})`);
      }
    }
  }

  /** The hosts of the URL are the cluster's shards, in shard order (each is local to its own shard). */
  private async checkShards(): Promise<void> {
    const cluster = this.target.cluster!;
    for (const [i, client] of this.clients.entries()) {
      const rows = await this.select<{ shard_num: number; is_local: number }>(
        client,
        'SELECT shard_num, is_local FROM system.clusters WHERE cluster = ?',
        [cluster],
      );
      const shards = new Set(rows.map((r) => r.shard_num));
      if (shards.size === 0) throw new Error(`ClickHouse host ${this.target.hosts[i]} knows no cluster "${cluster}" (remote_servers)`);
      if (shards.size !== this.clients.length) {
        throw new Error(`cluster "${cluster}" has ${shards.size} shards but OPS_EVENTS_URL names ${this.clients.length} hosts: name one host per shard, in shard order`);
      }
      const local = rows.find((r) => Number(r.is_local) === 1);
      if (local && local.shard_num !== i + 1) {
        throw new Error(`ClickHouse host ${this.target.hosts[i]} is shard ${local.shard_num} of "${cluster}", but it is host ${i + 1} in OPS_EVENTS_URL: list the hosts in shard order`);
      }
    }
  }

  // ---- statements --------------------------------------------------------------------------

  /**
   * ClickHouse's own refusals carry its error code ("Code: 241, e.displayText() = …" from 18.16,
   * whose format the client library does not parse; `code` from current servers). Anything
   * without one is the connection: the server is unreachable.
   */
  private translate(error: unknown): Error {
    if (error instanceof EventStoreUnavailableError || error instanceof EventStoreResourceError) return error;
    const e = error as Error & { code?: string };
    const code = e.code && /^\d+$/.test(e.code) ? e.code : /\bCode: (\d+)/.exec(e.message ?? '')?.[1];
    if (code && resourceCodes.has(code)) return new EventStoreResourceError(error);
    if (code) return e; // ClickHouse refused the statement: a fault of ours
    return new EventStoreUnavailableError(`ClickHouse is unreachable: ${e.message}`, error);
  }

  private async command(client: ClickHouseClient, sql: string): Promise<void> {
    try {
      await client.command({ query: sql });
    } catch (error) {
      throw this.translate(error);
    }
  }

  private select<T>(client: ClickHouseClient, sql: string, params: readonly SqlValue[], lane?: ReadLane): Promise<T[]> {
    return this.answer<T[]>(client, sql, params, 'JSONEachRow', lane);
  }

  /** A statement's answer in `format` (JSONEachRow: the rows; JSON: an object with `data` and, WITH TOTALS, `totals`). */
  private async answer<R>(client: ClickHouseClient, sql: string, params: readonly SqlValue[], format: 'JSONEachRow' | 'JSON', lane?: ReadLane): Promise<R> {
    if (this.closed) throw new Error('event store closed');
    try {
      const result = await client.query({
        query: bindParams(sql, params),
        format,
        clickhouse_settings: { max_memory_usage: String(this.readMemoryBytes) as never, priority: String(priorityOf(lane)) as never },
      });
      return (await result.json()) as R;
    } catch (error) {
      throw this.translate(error);
    }
  }

  /** A read whose statement says WITH TOTALS: its rows and the totals row, spread over the hosts as `read`. */
  private readWithTotals<T>(sql: string, params: readonly SqlValue[], lane?: ReadLane): Promise<{ data: T[]; totals?: Record<string, unknown> }> {
    const client = this.clients[this.readReplica++ % this.clients.length]!;
    return this.answer(client, sql, params, 'JSON', lane);
  }

  /** A read on the Distributed (or only) `events` table, spread over the hosts. */
  private read<T>(sql: string, params: readonly SqlValue[], lane?: ReadLane): Promise<T[]> {
    const client = this.clients[this.readReplica++ % this.clients.length]!;
    return this.select<T>(client, sql, params, lane);
  }

  private get first(): ClickHouseClient {
    return this.clients[0]!;
  }

  // ---- loading -----------------------------------------------------------------------------

  async loadedSeq(): Promise<number> {
    const [row] = await this.select<{ p: string }>(this.first, `SELECT toUInt64(max(position)) AS p FROM ${this.db}.event_loaders WHERE log_id = ?`, [this.logId]);
    let loaded = Number(row?.p ?? 0);
    if (this.logId === '') {
      // The log from before log ids recorded its position in the single-log table.
      const [legacy] = await this.select<{ p: string }>(this.first, `SELECT toUInt64(max(position)) AS p FROM ${this.db}.event_loader`, []);
      loaded = Math.max(loaded, Number(legacy?.p ?? 0));
    }
    this.loaded = loaded;
    await this.findPresent();
    return this.loaded;
  }

  /** Which of this log's seqs past the loaded position a half-landed load stored. */
  private async findPresent(): Promise<void> {
    const rows = await this.select<{ seq: string }>(this.first, `SELECT seq FROM ${this.db}.events WHERE log_id = ? AND seq > ?`, [this.logId, this.loaded]);
    this.present = rows.length ? new Set(rows.map((r) => Number(r.seq))) : undefined;
    this.presentUnknown = false;
  }

  async load(records: readonly LoadRecord[], lastSeq: number): Promise<void> {
    if (this.closed) throw new Error('event store closed');
    if (this.presentUnknown) await this.findPresent();
    const rows = new RowBinaryWriter();
    const hot = this.hot.forLoad(records);
    let count = 0;
    const present = this.present;
    const newestLoaded = new Map<string, number>();
    for (const { firstSeq, body } of records) {
      const batch = new BatchReader(body);
      const tenant = tenantKey(batch.tenant);
      let newest = newestLoaded.get(tenant) ?? -Infinity;
      let seq = firstSeq;
      while (batch.next()) {
        const rowSeq = seq++;
        if (batch.ts > newest) newest = batch.ts;
        if (present?.has(rowSeq)) continue;
        count++;
        const payload = batch.text(4) ?? '{}';
        const flat = flattenPayload(payload);
        const { textStart: start, textLength: length } = batch;
        rows.string(tenant);
        rows.string(batch.datasetId);
        rows.int64(Math.trunc(batch.ts));
        rows.bytes(body, batch.eventIdAt, 36);
        rows.int64(rowSeq);
        rows.int64(Math.trunc(batch.ingestedAt));
        rows.uint8(batch.severity);
        rows.bytes(body, Math.max(start[0]!, 0), Math.max(length[0]!, 0)); // event
        rows.nullableBytes(body, start[1]!, length[1]!); // actor
        rows.nullableBytes(body, start[2]!, length[2]!); // source
        rows.bytes(body, Math.max(start[3]!, 0), Math.max(length[3]!, 0)); // message
        rows.string(payload);
        rows.int32(batch.bytesRaw);
        rows.stringArray(flat.paths);
        rows.uint8Array(flat.types);
        rows.stringArray(flat.text);
        rows.float64Array(flat.numbers);
        rows.stringArray(flat.json);
        rows.string(this.logId);
        hot.write(rows, batch.datasetId, Math.trunc(batch.ts), flat);
      }
      newestLoaded.set(tenant, newest);
    }
    // The rows' hot types are known before any of them can be read (clickhouse-hot-layouts.ts).
    hot.landing();
    try {
      if (count) {
        const result = await this.first.exec({
          query: `INSERT INTO ${this.db}.events (${insertColumns}${hot.columns}) FORMAT RowBinary`,
          values: Readable.from([rows.written]),
          // Through a Distributed table: answered once every shard has its rows (not queued).
          clickhouse_settings: this.target.cluster ? { insert_distributed_sync: 1 } : {},
        });
        result.stream.resume();
      }
      await this.command(this.first, bindParams(`INSERT INTO ${this.db}.event_loaders (log_id, position) VALUES (?, ${Math.trunc(lastSeq)})`, [this.logId]));
    } catch (error) {
      // Some rows may be stored: the next attempt asks which (findPresent) before loading again.
      this.presentUnknown = true;
      throw this.translate(error);
    } finally {
      hot.done();
    }
    this.loaded = lastSeq;
    for (const [tenant, ts] of newestLoaded) {
      const known = this.newest.get(tenant);
      // Unchecked (checkedAt 0) when new: the next page asks only for rows past it.
      if (known) known.ts = Math.max(known.ts, Math.trunc(ts));
      else this.newest.set(tenant, { ts: Math.trunc(ts), checkedAt: 0 });
    }
    if (present && [...present].every((s) => s <= lastSeq)) this.present = undefined;
  }

  // ---- reads -------------------------------------------------------------------------------

  async existingIds(tenant: Tenant, eventIds: readonly string[]): Promise<string[]> {
    const found: string[] = [];
    const ids = eventIds.filter(isUuid);
    for (let i = 0; i < ids.length; i += 1000) {
      const chunk = ids.slice(i, i + 1000);
      const rows = await this.read<{ event_id: string }>(
        `SELECT event_id FROM ${this.db}.events WHERE tenant = ? AND event_id IN (${chunk.map(() => '?').join(', ')})`,
        [tenantKey(tenant), ...chunk],
      );
      for (const r of rows) found.push(r.event_id);
    }
    return found;
  }

  /**
   * One page, newest first, in two statements: the keys of the page (ts, event_id: the filter's
   * columns and two more are read), widening the time window until the page is full; then the
   * page's rows by key, within the page's time range.
   */
  async query(tenant: Tenant, request: EnginePageRequest): Promise<{ events: StoredEvent[]; more: boolean }> {
    const limit = Math.trunc(request.limit);
    const where = whereOf(request.filter);
    const tenantParam = tenantKey(tenant);
    const newest = (await this.newestTs(tenantParam)) ?? Date.now();
    const anchor = request.after ? Math.min(request.after.ts, newest) : newest;
    let keys: Array<{ ts: string; event_id: string }> = [];
    for (const window of pageWindowsMs) {
      const params: SqlValue[] = [tenantParam, ...request.filter.params];
      let sql = `SELECT ts, event_id FROM ${this.db}.events WHERE tenant = ? AND (${where})`;
      if (request.after) {
        sql += ' AND (ts < ? OR (ts = ? AND event_id < ?))';
        params.push(request.after.ts, request.after.ts, request.after.event_id);
      }
      if (Number.isFinite(window)) {
        sql += ' AND ts >= ?';
        params.push(anchor - window);
      }
      keys = await this.read(`${sql} ORDER BY ts DESC, event_id DESC LIMIT ${limit + 1}`, params, request.lane);
      if (keys.length > limit) break;
    }
    const page = keys.slice(0, limit);
    if (page.length === 0) return { events: [], more: false };
    const tsList = page.map((k) => Number(k.ts));
    const rows = await this.read<EventRow>(
      `SELECT ${eventColumns} FROM ${this.db}.events WHERE tenant = ? AND ts >= ? AND ts <= ? AND event_id IN (${page.map(() => '?').join(', ')})`,
      [tenantParam, Math.min(...tsList), Math.max(...tsList), ...page.map((k) => k.event_id)],
      request.lane,
    );
    const byKey = new Map(rows.map((r) => [`${r.ts}|${r.event_id}`, r]));
    const events = page.flatMap((k) => {
      const row = byKey.get(`${k.ts}|${k.event_id}`);
      return row ? [toStoredEvent(row)] : [];
    });
    return { events, more: keys.length > limit };
  }

  /**
   * The tenant's newest ts: what this process loaded, checked against the table every
   * newestTsTtlMs by reading only the rows past it; the first time, max(ts) over the tenant.
   */
  private async newestTs(tenantParam: string): Promise<number | undefined> {
    const known = this.newest.get(tenantParam);
    const now = Date.now();
    if (known && now - known.checkedAt < newestTsTtlMs) return known.ts;
    // Aliases differ from column names: ClickHouse reads an alias wherever its name appears.
    const [row] = await this.read<{ newest: string; n: string }>(
      `SELECT toString(max(ts)) AS newest, count() AS n FROM ${this.db}.events WHERE tenant = ?${known ? ' AND ts > ?' : ''}`,
      known ? [tenantParam, known.ts] : [tenantParam],
    );
    if (Number(row?.n ?? 0) === 0) {
      if (known) known.checkedAt = now;
      return known?.ts;
    }
    const ts = Math.max(Number(row!.newest), known?.ts ?? -Infinity);
    this.newest.set(tenantParam, { ts, checkedAt: now });
    return ts;
  }

  async aggregate(tenant: Tenant, request: AggregateRequest): Promise<RawGroupRow[]> {
    const statement = groupByStatement(`${this.db}.events`, request.key, `tenant = ? AND (${whereOf(request.filter)})`, request.limit);
    type Row = { value: string | number | null; n: string };
    const rows = await runGroupBy<Row>(
      statement,
      [...statement.params, tenantKey(tenant), ...request.filter.params],
      (sql, params) => this.read<Row>(sql, params, request.lane),
      (sql, params) => this.readWithTotals<Row>(sql, params, request.lane),
    );
    return rows.map((r) => ({ key: r.value, count: Number(r.n) }));
  }

  async stats(tenant: Tenant, request: StatsRequest): Promise<RawStatsRow[]> {
    const { select, groupBy, params } = statsSelect(request);
    const prewhere = request.filter.prewhere;
    const rows = await this.read<Record<string, string | number | boolean | null>>(
      `SELECT ${select} FROM ${this.db}.events ${prewhere ? `PREWHERE ${prewhere.where} ` : ''}WHERE tenant = ? AND (${whereOf(request.filter)})${groupBy} ` +
        `ORDER BY ${request.orderBy} LIMIT ${Math.trunc(request.limit)}`,
      [...params, ...(prewhere?.params ?? []), tenantKey(tenant), ...request.filter.params],
      request.lane,
    );
    // 64-bit integers come as JSON strings: counts are numbers; keys stay raw for decodeGroupValue.
    return rows.map((r) => ({
      keys: request.keys.map((_, i) => r[`k${i}`] ?? null),
      values: request.values.map((_, i) => {
        const v = r[`v${i}`];
        return v === null || v === undefined ? null : Number(v);
      }),
    }));
  }

  /** Counts straight from the events: the (tenant, ts) index reads only the window's rows. */
  async rollupCounts(tenant: Tenant, datasetIds: readonly string[], sinceMs: number): Promise<Array<[string, number]>> {
    if (!datasetIds.length) return [];
    const rows = await this.read<{ dataset_id: string; n: string }>(
      `SELECT dataset_id, count() AS n FROM ${this.db}.events WHERE tenant = ? AND ts >= ? ` +
        `AND dataset_id IN (${datasetIds.map(() => '?').join(', ')}) GROUP BY dataset_id`,
      // Whole minutes, like the DuckDB engine's per-minute rollup.
      [tenantKey(tenant), Math.floor(sinceMs / 60_000) * 60_000, ...datasetIds],
    );
    return rows.map((r) => [r.dataset_id, Number(r.n)]);
  }

  /**
   * Discovery over a bounded sample (fieldStatsLimits): the events of the window ingested last,
   * at most 2,000 and about 2 MB (by their size as sent: reading the payloads to measure them
   * would read them all), then as many of their payloads, walked in discoverFields. Ordered by
   * (ingested_at, log_id, seq): every ingester's log numbers its own events.
   */
  async fieldStats(tenant: Tenant, request: FieldStatsRequest): Promise<FieldStats> {
    const where = `tenant = ? AND dataset_id = ? AND ts >= ?`;
    const params: SqlValue[] = [tenantKey(tenant), request.datasetId, request.sinceMs];
    const newestFirst = 'ORDER BY ingested_at DESC, log_id DESC, seq DESC';
    const sizes = await this.read<{ bytes_raw: number }>(
      `SELECT bytes_raw FROM ${this.db}.events WHERE ${where} ${newestFirst} LIMIT ${fieldStatsLimits.sampleEvents}`,
      params,
    );
    const range = sampleRange(sizes.map((r, i) => [i, r.bytes_raw] as const));
    if (!range) return { fields: [], sampledEvents: 0, truncated: false };
    const rows = await this.read<{ payload: string }>(`SELECT payload FROM ${this.db}.events WHERE ${where} ${newestFirst} LIMIT ${range.from + 1}`, params);
    const { fields, truncated, frequent } = discoverFields(
      rows.map((r) => r.payload),
      request.maxKeys,
      request.maxSamples,
    );
    return { fields, sampledEvents: rows.length, truncated, frequent };
  }

  /** One retention delete at a time (see deleteBeforeNow). */
  deleteBefore(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number> {
    const run = this.deletes.then(() => this.deleteBeforeNow(tenant, datasetId, beforeMs));
    this.deletes = run.catch(() => undefined);
    return run;
  }

  /**
   * Retention: counts what is due, and only when something is, deletes it with a mutation on
   * every shard (ALTER … DELETE; 18.16 rewrites the parts holding rows, in the background) and
   * waits until the mutations are done, so a read after the purge no longer sees the rows.
   */
  private async deleteBeforeNow(tenant: Tenant, datasetId: string, beforeMs: number): Promise<number> {
    const params: SqlValue[] = [tenantKey(tenant), datasetId, beforeMs];
    const [row] = await this.read<{ n: string }>(`SELECT count() AS n FROM ${this.db}.events WHERE tenant = ? AND dataset_id = ? AND ts < ?`, params);
    const due = Number(row?.n ?? 0);
    if (due === 0) return 0;
    // Page windows may start after the newest event left: ask again.
    this.newest.delete(tenantKey(tenant));
    const deadline = Date.now() + 10 * this.target.timeoutMs;
    for (const client of this.clients) {
      await this.command(client, bindParams(`ALTER TABLE ${this.db}.${this.table} DELETE WHERE tenant = ? AND dataset_id = ? AND ts < ?`, params));
    }
    for (const client of this.clients) {
      for (;;) {
        const [pending] = await this.select<{ n: string }>(
          client,
          'SELECT count() AS n FROM system.mutations WHERE database = ? AND table = ? AND is_done = 0',
          [this.db, this.table],
        );
        if (Number(pending?.n ?? 0) === 0) break;
        if (Date.now() > deadline) throw new EventStoreUnavailableError('ClickHouse has not finished deleting expired events; they go at the next purge');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    // The layouts' ts ranges may have shrunk: asked of the table again.
    this.hot.forget(datasetId);
    return due;
  }

  /**
   * Live tail across every ingester's log: per log the position knows, its events past the
   * position's seq; of the others, those ingested from the position's `since` on
   * (tail-position.ts). In ingest order: (ingested_at, log_id, seq), which within one log is seq
   * order, so a page cut by the limit leaves no gap in any log.
   */
  async readAfter(tenant: Tenant, request: TailRequest): Promise<StoredEvent[]> {
    const known = Object.entries(request.after.logs);
    const params: SqlValue[] = [tenantKey(tenant)];
    const after = known.map(([log, seq]) => {
      params.push(log, seq);
      return '(log_id = ? AND seq > ?)';
    });
    if (known.length) params.push(...known.map(([log]) => log));
    params.push(request.after.since);
    after.push(`(${known.length ? `log_id NOT IN (${known.map(() => '?').join(', ')}) AND ` : ''}ingested_at >= ?)`);
    const rows = await this.read<EventRow>(
      `SELECT ${eventColumns} FROM ${this.db}.events WHERE tenant = ? AND (${after.join(' OR ')}) AND (${whereOf(request.filter)}) ` +
        `ORDER BY ingested_at, log_id, seq LIMIT ${Math.trunc(request.limit)}`,
      [...params, ...request.filter.params],
    );
    return rows.map(toStoredEvent);
  }

  /**
   * Every log's position as its loader recorded it after the rows (`event_loaders`, on the first
   * host): an INSERT through the Distributed table is synchronous, so each of those rows is
   * readable on its shard.
   */
  async loadedPositions(): Promise<Record<string, number>> {
    const rows = await this.select<{ log_id: string; p: string }>(this.first, `SELECT log_id, toUInt64(max(position)) AS p FROM ${this.db}.event_loaders GROUP BY log_id`, []);
    const positions: Record<string, number> = Object.fromEntries(rows.map((r) => [r.log_id, Number(r.p)]));
    // The log from before log ids recorded its position in the single-log table.
    const [legacy] = await this.select<{ p: string }>(this.first, `SELECT toUInt64(max(position)) AS p FROM ${this.db}.event_loader`, []);
    if (Number(legacy?.p ?? 0) > (positions[''] ?? 0)) positions[''] = Number(legacy!.p);
    return positions;
  }

  async logPositions(tenant: Tenant, sinceMs: number): Promise<Record<string, number>> {
    const rows = await this.read<{ log_id: string; last: string }>(
      `SELECT log_id, max(seq) AS last FROM ${this.db}.events WHERE tenant = ? AND ingested_at >= ? GROUP BY log_id`,
      [tenantKey(tenant), sinceMs],
    );
    return Object.fromEntries(rows.map((r) => [r.log_id, Number(r.last)]));
  }

  /** The dataset's hot payload keys for rows loaded from now on (clickhouse-hot-layouts.ts). */
  setHotKeys(_tenant: Tenant, datasetId: string, keys: readonly HotKey[]): Promise<void> {
    return this.hot.set(datasetId, keys);
  }

  /** Starts filling the slot columns of the dataset's rows stored before its current hot keys (clickhouse-hot-backfill.ts). */
  backfillHotKeys(tenant: Tenant, datasetId: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new Error('event store closed'));
    return this.backfill.request(tenantKey(tenant), datasetId);
  }

  /** Per dataset, the layouts its rows carry and their ts ranges (the compiler reads a column only when every row has it). */
  hotLayouts(tenant: Tenant, datasetIds: readonly string[]): Promise<HotLayout[]> {
    return this.hot.forRead(tenantKey(tenant), datasetIds);
  }

  async ping(): Promise<void> {
    for (const client of this.clients) await this.select(client, 'SELECT 1', []);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.backfill?.close();
    await this.deletes;
    await Promise.all(this.clients.map((c) => c.close()));
  }
}

/**
 * ClickHouse's `priority` for a read (1 is the highest): a server pauses a query while one of a
 * higher priority runs on it (each wait at most a second, then it goes on), so a threshold
 * monitor's scan stands aside for the API's reads on every host its Distributed read reaches,
 * as the DuckDB lane does (docs/monitors.md "Beside the API").
 */
function priorityOf(lane: ReadLane | undefined): number {
  return lane === 'monitors' ? 2 : 1;
}
