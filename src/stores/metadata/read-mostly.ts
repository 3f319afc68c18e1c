import type { CompiledQuery } from 'kysely';

/** How many distinct reads (SQL text and values) are kept; the oldest goes first. */
const maxEntries = 2_000;

interface Entry {
  stamp: number;
  rows: Promise<readonly unknown[]>;
}

/**
 * Answers of reads that are served far more often than their data changes (the members list
 * behind every page of the members screen), kept until anything is written to the database.
 * "Anything written" is two counters read together as a stamp: this process's count of write
 * statements, and a counter that moves when any connection — opsctl, a second server — commits
 * (wal-change-counter.ts). An answer is served again only under the stamp it was read under, so
 * it is never staler than a fresh read; checking the stamp costs about one pread where the
 * members join costs ~14 µs.
 *
 * The stamp is taken before the read runs: a write that lands while the read waits for the
 * connection leaves the entry under an older stamp, so the next request reads again. Rows are
 * shared between callers and must not be modified.
 */
export class ReadMostlyCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * A short number per SQL text, for the key: the hot queries are compiled once, so their text
   * is the same string every time and its hash is remembered; a key that spelt the text out
   * would be a new 400-character string to hash on every request.
   */
  private readonly sqlIds = new Map<string, number>();

  /**
   * @param stampNow the stamp: moves whenever anything is written to the database, but for
   *   this process's own writes of `unstampedTables`
   * @param unstampedTables so a read that names one of them is refused: it would be served
   *   after such a write
   */
  constructor(
    private readonly stampNow: () => number,
    private readonly unstampedTables: readonly string[] = [],
  ) {}

  read<Row>(query: CompiledQuery<Row>, load: () => Promise<readonly Row[]>): Promise<readonly Row[]> {
    let sqlId = this.sqlIds.get(query.sql);
    if (sqlId === undefined) {
      const unseen = this.unstampedTables.find((table) => query.sql.includes(`"${table}"`));
      if (unseen !== undefined) return Promise.reject(new Error(`a read-mostly read may not read ${unseen}: this process's writes of it do not move the stamp`));
      if (this.sqlIds.size >= maxEntries) this.clear();
      sqlId = this.sqlIds.size;
      this.sqlIds.set(query.sql, sqlId);
    }
    const key = `${sqlId}${JSON.stringify(query.parameters)}`;
    const stamp = this.stampNow();
    const entry = this.entries.get(key);
    if (entry?.stamp === stamp) return entry.rows as Promise<readonly Row[]>;
    const rows = load();
    if (entry) this.entries.delete(key);
    else if (this.entries.size >= maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { stamp, rows });
    // A failed read is not an answer: the next request tries again.
    rows.catch(() => {
      if (this.entries.get(key)?.rows === rows) this.entries.delete(key);
    });
    return rows;
  }

  private clear(): void {
    this.sqlIds.clear();
    this.entries.clear();
  }
}
