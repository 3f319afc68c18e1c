import type { ClickHouseClient } from '@clickhouse/client';
import type { HotLayout } from '../hot-columns.js';
import type { ClickHouseHotLayouts } from './clickhouse-hot-layouts.js';
import { hotSlotColumns } from './clickhouse-hot-layouts.js';
import { payloadType } from './payload-paths.js';
import { bindParams, stringLiteral, type SqlValue } from './literal.js';

/** What the backfill needs of the engine. */
export interface HotBackfillHost {
  clients: readonly ClickHouseClient[];
  db: string;
  /** The MergeTree table of each host (events_local in a cluster): mutations run there, host by host. */
  table: string;
  command(client: ClickHouseClient, sql: string): Promise<void>;
  select<T>(client: ClickHouseClient, sql: string, params: readonly SqlValue[]): Promise<T[]>;
}

/** How often a running mutation is looked at. */
const pollMs = 1_000;

/**
 * The four columns of a slot as the loader writes them (clickhouse-hot-layouts.ts writeHotSlot
 * and hotJson), from the row's flattened arrays: the element at the key's path (index 0, the
 * arrays' "missing", when it is not there), and the JSON text left '' where the reader writes it
 * from the others.
 */
export function slotAssignments(slot: number, pointer: string): string[] {
  const at = `indexOf(payload_paths, ${stringLiteral(pointer)})`;
  const t = `arrayElement(payload_types, ${at})`;
  const s = `arrayElement(payload_text, ${at})`;
  const n = `arrayElement(payload_numbers, ${at})`;
  const j = `arrayElement(payload_json, ${at})`;
  const [ct, cs, cn, cj] = hotSlotColumns(slot).map((c) => c.name);
  return [
    `${ct} = ${t}`,
    `${cs} = ${s}`,
    `${cn} = ${n}`,
    `${cj} = multiIf(${t} = ${payloadType.string} AND ${j} = concat('"', ${s}, '"'), '', ` +
      `${t} = ${payloadType.number} AND ${n} = floor(${n}) AND abs(${n}) < 1e15 AND ${j} = toString(toInt64(${n})), '', ${j})`,
  ];
}

/**
 * Gives the rows a dataset stored before its current hot keys (hot_layout of an older layout, or
 * 0) the current layout's slot columns: one mutation per host (`ALTER TABLE … UPDATE … WHERE
 * tenant = … AND dataset_id = … AND hot_layout != <current>`), computed from the row's flattened
 * arrays exactly as the loader computes them, so a row's columns are the same whether it was
 * loaded with the layout or filled afterwards. ClickHouse runs mutations in its background pool
 * (as merges, beside the queries); 18.16 rewrites only the columns it sets, in the parts holding
 * such rows, and links the other parts as they are. Rows change layout part by part; reads stay
 * exact meanwhile because a read takes a column only when every layout with rows in its scope
 * holds the key (clickhouse-soql-hot.ts), and after the mutations the dataset's ranges are asked of
 * the table again (ClickHouseHotLayouts.forget).
 *
 * One backfill per dataset at a time in this process; a mutation another process started for the
 * dataset (it is in system.mutations, not done) is waited for rather than repeated.
 */
export class ClickHouseHotBackfill {
  private readonly running = new Map<string, Promise<void>>();
  private closed = false;
  /** Mutations started by this process (tests and benches). */
  started = 0;

  constructor(
    private readonly host: HotBackfillHost,
    private readonly layouts: ClickHouseHotLayouts,
  ) {}

  /** Starts the backfill when the dataset has rows of another layout than its current one; true while one runs or such rows are known. */
  async request(tenantKey: string, datasetId: string): Promise<boolean> {
    if (this.closed) return false;
    if (this.running.has(datasetId)) return true;
    const layout = this.layouts.current(datasetId);
    if (!layout) return false;
    // Other ingesters may still load rows with an older layout: start once they have this one.
    if (await this.layouts.inGrace(datasetId)) return true;
    const read = await this.layouts.forRead(tenantKey, [datasetId]);
    if (!read.some((l) => l.id !== layout.id && l.stored !== undefined)) return false;
    const run = this.fill(tenantKey, datasetId, layout).finally(() => this.running.delete(datasetId));
    this.running.set(datasetId, run.catch(() => undefined));
    return true;
  }

  private async fill(tenantKey: string, datasetId: string, layout: HotLayout): Promise<void> {
    try {
      if (!(await this.pending(datasetId))) {
        const set = [`hot_layout = ${Math.trunc(layout.id)}`, ...layout.slots.flatMap((s) => slotAssignments(s.slot, s.pointer))];
        const sql = bindParams(
          `ALTER TABLE ${this.host.db}.${this.host.table} UPDATE ${set.join(', ')} WHERE tenant = ? AND dataset_id = ? AND hot_layout != ${Math.trunc(layout.id)}`,
          [tenantKey, datasetId],
        );
        for (const client of this.host.clients) await this.host.command(client, sql);
        this.started++;
      }
      while (!this.closed && (await this.pending(datasetId))) await new Promise((resolve) => setTimeout(resolve, pollMs));
    } finally {
      // The rows' layouts changed (or may have, part by part): asked of the table again.
      this.layouts.forget(datasetId);
    }
  }

  /** Whether a backfill mutation of the dataset is not done on some host (this process's or another's). */
  private async pending(datasetId: string): Promise<boolean> {
    for (const client of this.host.clients) {
      const [row] = await this.host.select<{ n: string }>(
        client,
        "SELECT count() AS n FROM system.mutations WHERE database = ? AND table = ? AND is_done = 0 AND position(command, 'hot_layout') > 0 AND position(command, ?) > 0",
        [this.host.db, this.host.table, `dataset_id = ${stringLiteral(datasetId)}`],
      );
      if (Number(row?.n ?? 0) > 0) return true;
    }
    return false;
  }

  /** Stops waiting (mutations started go on in ClickHouse). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.running.values());
  }
}
