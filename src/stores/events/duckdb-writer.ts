import type { DuckDBConnection } from '@duckdb/node-api';
import type { Tenant } from '../../tenancy/tenant.js';
import type { AppendResult, NewEvent } from './event-store.js';
import { EventChunkBuilder } from './duckdb-chunk.js';
import { isUuid, sqlString, tenantKey, tenantWhere, type TenantIds } from './duckdb-sql.js';

interface Pending {
  tenant: Tenant;
  events: readonly NewEvent[];
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** Upper bound of events in one commit; more waits for the next one. */
const maxEventsPerCommit = 200_000;
/** Commits between two merges of the rollup's rows. */
const rollupCompactionEvery = 1_000;

interface RollupRow {
  tenant: number;
  datasetId: string;
  minute: number;
  count: number;
}

/**
 * Group commit: appends that arrive while a commit runs wait and go together into the next
 * one. A commit writes its rows column by column into DuckDB data chunks (one tenant and
 * dataset per chunk), appends them and the per-minute rollup in one transaction, and resolves
 * the callers only after COMMIT, i.e. once DuckDB's WAL holds them. Client event ids are
 * looked up only when a batch carries some.
 */
export class GroupCommitWriter {
  private queue: Pending[] = [];
  private running: Promise<void> | undefined;
  private commitsSinceCompaction = 0;

  constructor(
    private readonly connection: DuckDBConnection,
    private readonly tenants: TenantIds,
    private nextSeq: number,
    private readonly now: () => number,
  ) {}

  append(tenant: Tenant, events: readonly NewEvent[]): Promise<AppendResult> {
    if (events.length === 0) return Promise.resolve({ stored: 0, duplicates: 0, lastSeq: 0 });
    return new Promise((resolve, reject) => {
      this.queue.push({ tenant, events, resolve, reject });
      this.kick();
    });
  }

  /** Resolves when everything queued so far is committed (or failed). */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private kick(): void {
    if (this.running) return;
    this.running = this.loop().finally(() => {
      this.running = undefined;
      if (this.queue.length) this.kick();
    });
  }

  private async loop(): Promise<void> {
    while (this.queue.length) {
      let count = 0;
      let take = 0;
      while (take < this.queue.length && (take === 0 || count + this.queue[take]!.events.length <= maxEventsPerCommit)) {
        count += this.queue[take]!.events.length;
        take++;
      }
      const batch = this.queue.splice(0, take);
      try {
        const results = await this.commit(batch);
        batch.forEach((p, i) => p.resolve(results[i]!));
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
      // Best effort: a failed merge leaves the rows unmerged, which readers sum all the same.
      await this.compactRollup().catch(() => undefined);
    }
  }

  /** Client event ids of the batch that are already stored, per tenant key. */
  private async existingIds(batch: Pending[]): Promise<Set<string>> {
    const byTenant = new Map<string, { id: number; ids: string[] }>();
    for (const p of batch) {
      const id = this.tenants.get(p.tenant);
      if (id === undefined) continue; // no events stored yet
      for (const e of p.events) {
        if (!e.clientEventId || !isUuid(e.eventId)) continue;
        const key = tenantKey(p.tenant);
        let entry = byTenant.get(key);
        if (!entry) byTenant.set(key, (entry = { id, ids: [] }));
        entry.ids.push(e.eventId);
      }
    }
    const existing = new Set<string>();
    for (const [key, { id, ids }] of byTenant) {
      for (let i = 0; i < ids.length; i += 1000) {
        const list = ids.slice(i, i + 1000).map((e) => `${sqlString(e)}::UUID`).join(',');
        const reader = await this.connection.runAndReadAll(
          `SELECT event_id::VARCHAR FROM events WHERE ${tenantWhere} AND event_id IN (${list})`,
          [id],
        );
        for (const row of reader.getRows()) existing.add(`${key}|${row[0] as string}`);
      }
    }
    return existing;
  }

  private async commit(batch: Pending[]): Promise<AppendResult[]> {
    const existing = await this.existingIds(batch);
    const ingestedAt = this.now();
    const chunks: EventChunkBuilder[] = [];
    const rollup = new Map<string, RollupRow>();
    const newTenants = new Map<string, { tenant: Tenant; id: number }>();
    const results: AppendResult[] = [];
    let seq = this.nextSeq;
    let chunk: EventChunkBuilder | undefined;
    let chunkKey = '';
    for (const p of batch) {
      const key = tenantKey(p.tenant);
      let tenantId = this.tenants.get(p.tenant) ?? newTenants.get(key)?.id;
      if (tenantId === undefined) {
        tenantId = this.tenants.allocate();
        newTenants.set(key, { tenant: p.tenant, id: tenantId });
      }
      let stored = 0;
      let duplicates = 0;
      let lastMinute = -1;
      let lastEntry: RollupRow | undefined;
      for (const e of p.events) {
        if (e.clientEventId) {
          const idKey = `${key}|${e.eventId}`;
          if (existing.has(idKey)) {
            duplicates++;
            continue;
          }
          existing.add(idKey);
        }
        if (!chunk || chunk.full || chunkKey !== `${tenantId}|${e.datasetId}`) {
          chunkKey = `${tenantId}|${e.datasetId}`;
          chunks.push((chunk = new EventChunkBuilder(tenantId, e.datasetId, ingestedAt)));
        }
        chunk.add({
          seq,
          eventId: e.eventId,
          ts: e.ts,
          severity: e.severity,
          event: e.event,
          actor: e.actor,
          source: e.source,
          message: e.message,
          payload: e.payload,
          bytesRaw: e.bytesRaw,
        });
        seq++;
        stored++;
        const minute = Math.floor(e.ts / 60_000);
        if (minute !== lastMinute || e.datasetId !== lastEntry?.datasetId) {
          lastMinute = minute;
          const rollupKey = `${tenantId}|${e.datasetId}|${minute}`;
          lastEntry = rollup.get(rollupKey);
          if (!lastEntry) rollup.set(rollupKey, (lastEntry = { tenant: tenantId, datasetId: e.datasetId, minute, count: 0 }));
        }
        lastEntry.count++;
      }
      results.push({ stored, duplicates, lastSeq: stored ? seq - 1 : 0 });
    }
    if (chunks.length === 0) return results;

    await this.connection.run('BEGIN TRANSACTION');
    try {
      for (const { tenant, id } of newTenants.values()) {
        await this.connection.run('INSERT INTO event_tenants VALUES (?, ?, ?, ?)', [id, tenant.orgId, tenant.projectId, tenant.mode]);
      }
      const appender = await this.connection.createAppender('events');
      try {
        for (const c of chunks) appender.appendDataChunk(c.build());
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
      await this.appendRollup(rollup.values());
      await this.connection.run('COMMIT');
    } catch (error) {
      await this.connection.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
    for (const { tenant, id } of newTenants.values()) this.tenants.confirm(tenant, id);
    this.nextSeq = seq;
    return results;
  }

  /** The commit's per-minute counts, appended (no index to maintain); see compactRollup. */
  private async appendRollup(rows: Iterable<RollupRow>): Promise<void> {
    const appender = await this.connection.createAppender('events_rollup');
    try {
      for (const r of rows) {
        appender.appendUInteger(r.tenant);
        appender.appendVarchar(r.datasetId);
        appender.appendBigInt(BigInt(r.minute));
        appender.appendBigInt(BigInt(r.count));
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    this.commitsSinceCompaction++;
  }

  /**
   * Merges the rollup's rows to one per (tenant, dataset, minute). Runs between commits (so
   * no append interleaves) about every `rollupCompactionEvery` commits; readers sum the rows,
   * so they see the same counts before and after.
   */
  private async compactRollup(): Promise<void> {
    if (this.commitsSinceCompaction < rollupCompactionEvery) return;
    this.commitsSinceCompaction = 0;
    await this.connection.run('BEGIN TRANSACTION');
    try {
      await this.connection.run(
        'CREATE OR REPLACE TEMP TABLE rollup_merged AS SELECT tenant, dataset_id, minute, sum(count)::BIGINT AS count FROM events_rollup GROUP BY ALL',
      );
      await this.connection.run('DELETE FROM events_rollup');
      await this.connection.run('INSERT INTO events_rollup SELECT * FROM rollup_merged');
      await this.connection.run('DROP TABLE rollup_merged');
      await this.connection.run('COMMIT');
    } catch (error) {
      await this.connection.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
