import fs from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { Tenant } from '../../tenancy/tenant.js';
import type { AppendResult, NewEvent } from './event-store.js';
import { isUuid, sqlString, tenantParams, tenantWhere } from './duckdb-sql.js';

interface Pending {
  tenant: Tenant;
  events: readonly NewEvent[];
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

/** Upper bound of events in one commit; more waits for the next one. */
const maxEventsPerCommit = 200_000;

const stagingColumns =
  "{s:'BIGINT', o:'VARCHAR', p:'VARCHAR', m:'VARCHAR', d:'VARCHAR', i:'VARCHAR', t:'BIGINT', v:'UTINYINT', b:'INTEGER', " +
  "e:'STRUCT(event VARCHAR, actor VARCHAR, source VARCHAR, message VARCHAR, payload JSON)'}";

/**
 * Group commit: appends that arrive while a commit runs wait and go together into the next
 * one. A commit stages its rows as NDJSON (the client's own bytes where possible) and lets
 * DuckDB's parallel JSON reader insert them in one transaction with the per-minute rollup,
 * off the event loop. Callers are resolved only after COMMIT, i.e. once DuckDB's WAL holds them.
 */
export class GroupCommitWriter {
  private queue: Pending[] = [];
  private running: Promise<void> | undefined;
  private batchNumber = 0;

  constructor(
    private readonly connection: DuckDBConnection,
    private readonly stagingDir: string,
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
    }
  }

  /** Client event ids of the batch that are already stored, per tenant key. */
  private async existingIds(batch: Pending[]): Promise<Set<string>> {
    const byTenant = new Map<string, { tenant: Tenant; ids: string[] }>();
    for (const p of batch) {
      for (const e of p.events) {
        if (!e.clientEventId || !isUuid(e.eventId)) continue;
        const key = tenantKey(p.tenant);
        let entry = byTenant.get(key);
        if (!entry) byTenant.set(key, (entry = { tenant: p.tenant, ids: [] }));
        entry.ids.push(e.eventId);
      }
    }
    const existing = new Set<string>();
    for (const [key, { tenant, ids }] of byTenant) {
      for (let i = 0; i < ids.length; i += 1000) {
        const list = ids.slice(i, i + 1000).map((id) => `${sqlString(id)}::UUID`).join(',');
        const reader = await this.connection.runAndReadAll(
          `SELECT event_id::VARCHAR FROM events WHERE ${tenantWhere} AND event_id IN (${list})`,
          tenantParams(tenant),
        );
        for (const row of reader.getRows()) existing.add(`${key}|${row[0] as string}`);
      }
    }
    return existing;
  }

  private async commit(batch: Pending[]): Promise<AppendResult[]> {
    const existing = await this.existingIds(batch);
    const ingestedAt = this.now();
    const lines: string[] = [];
    const rollup = new Map<string, { tenant: Tenant; datasetId: string; minute: number; count: number }>();
    const results: AppendResult[] = [];
    let seq = this.nextSeq;
    for (const p of batch) {
      const key = tenantKey(p.tenant);
      const prefix = `,"o":${JSON.stringify(p.tenant.orgId)},"p":${JSON.stringify(p.tenant.projectId)},"m":${JSON.stringify(p.tenant.mode)},"d":`;
      let stored = 0;
      let duplicates = 0;
      let lastDataset = '';
      let datasetJson = '';
      let lastMinute = -1;
      let lastEntry: { tenant: Tenant; datasetId: string; minute: number; count: number } | undefined;
      for (const e of p.events) {
        if (e.clientEventId) {
          const idKey = `${key}|${e.eventId}`;
          if (existing.has(idKey)) {
            duplicates++;
            continue;
          }
          existing.add(idKey);
        }
        if (e.datasetId !== lastDataset) {
          lastDataset = e.datasetId;
          datasetJson = JSON.stringify(e.datasetId);
        }
        lines.push(`{"s":${seq}${prefix}${datasetJson},"i":"${e.eventId}","t":${e.ts},"v":${e.severity},"b":${e.bytesRaw},"e":${e.body}}`);
        seq++;
        stored++;
        const minute = Math.floor(e.ts / 60_000);
        if (minute !== lastMinute || e.datasetId !== lastEntry?.datasetId) {
          lastMinute = minute;
          const rollupKey = `${key}|${e.datasetId}|${minute}`;
          lastEntry = rollup.get(rollupKey);
          if (!lastEntry) rollup.set(rollupKey, (lastEntry = { tenant: p.tenant, datasetId: e.datasetId, minute, count: 0 }));
        }
        lastEntry.count++;
      }
      results.push({ stored, duplicates, lastSeq: stored ? seq - 1 : 0 });
    }
    if (lines.length === 0) return results;

    const file = path.join(this.stagingDir, `batch-${process.pid}-${++this.batchNumber}.ndjson`);
    await fs.writeFile(file, lines.join('\n'));
    try {
      await this.connection.run('BEGIN TRANSACTION');
      try {
        await this.connection.run(
          `INSERT INTO events SELECT s, o, p, m, d, i::UUID, t, ${ingestedAt}, v, coalesce(e.event, ''), e.actor, e.source, ` +
            `coalesce(e.message, ''), coalesce(e.payload, '{}'), b ` +
            `FROM read_json(${sqlString(file)}, format = 'newline_delimited', columns = ${stagingColumns}, maximum_object_size = 1048576)`,
        );
        await this.upsertRollup([...rollup.values()]);
        await this.connection.run('COMMIT');
      } catch (error) {
        await this.connection.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
    } finally {
      await fs.rm(file, { force: true });
    }
    this.nextSeq = seq;
    return results;
  }

  private async upsertRollup(rows: Array<{ tenant: Tenant; datasetId: string; minute: number; count: number }>): Promise<void> {
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      const values: DuckDBValue[] = [];
      for (const r of chunk) values.push(r.tenant.orgId, r.tenant.projectId, r.tenant.mode, r.datasetId, r.minute, r.count);
      await this.connection.run(
        `INSERT INTO events_rollup VALUES ${chunk.map(() => '(?, ?, ?, ?, ?::BIGINT, ?::BIGINT)').join(', ')} ` +
          'ON CONFLICT DO UPDATE SET count = events_rollup.count + excluded.count',
        values,
      );
    }
  }
}

const tenantKey = (t: Tenant) => `${t.orgId}|${t.projectId}|${t.mode}`;
