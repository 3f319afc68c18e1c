/**
 * Whole POST /query answers (the bytes of an events page, cursor included), kept per tenant,
 * query text and cursor and served again while nothing they were made from changed: a dashboard
 * refreshing a query or a client polling asks the same page over and over, and each time the
 * request parsed the query, hashed it for the cursor, compiled the filter, looked the page up,
 * signed a cursor and joined ~45 KB of body — most of the request's own work, repeated while
 * nothing it was made from had changed.
 *
 * What an answer is made from, and how a change shows:
 * - the tenant's stored events: the event store's change count (EventStore.changeCount), moved
 *   by every acknowledged append and around every delete; a store that cannot tell (ClickHouse)
 *   gives none, and nothing is kept;
 * - the tenant's active datasets (names, archived or not): the very list DatasetService's
 *   read-mostly cache answers, the same array while nothing was written to the metadata
 *   database, a new one after any write (on PostgreSQL always a new one: nothing is served again);
 * - `now`, for relative times: answers are kept only where the query names none, or the cursor
 *   pins `now` (QueryService.keepable);
 * - the tenant, the query text and the cursor: the key. Another tenant's request, or a cursor
 *   not seen with this query for this tenant, is never answered from here (it is decoded,
 *   and refused when foreign, as ever).
 * The stamp is taken before the answer is made: a change while it is made leaves it under the
 * older stamp, which the next request's does not equal.
 */
export interface AnswerStamp {
  change: number;
  active: ReadonlyArray<{ id: string; name: string }>;
}

export interface KeptAnswer<T> {
  stamp: AnswerStamp;
  bytes: Buffer;
  /** What the request needs besides the bytes (the parsed query's payload paths, for hot keys). */
  extra: T;
}

export const sameStamp = (a: AnswerStamp, b: AnswerStamp): boolean => a.change === b.change && a.active === b.active;

export class KeptAnswers<T> {
  private readonly kept = new Map<string, KeptAnswer<T>>();
  private bytes = 0;

  /** At most `maxEntries` answers and `maxBytes` of them; the oldest go first. */
  constructor(
    private readonly maxEntries = 100,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  /** One key per (tenant, cursor, q): the cursor's length says where q starts (either may hold anything). */
  static key(owner: string, q: string, cursor: string | undefined): string {
    const c = cursor ?? '';
    return `${owner}\n${c.length}\n${c}${q}`;
  }

  get(key: string): KeptAnswer<T> | undefined {
    return this.kept.get(key);
  }

  keep(key: string, answer: KeptAnswer<T>): void {
    this.drop(key);
    if (answer.bytes.length > this.maxBytes / 4) return;
    while (this.kept.size >= this.maxEntries || this.bytes + answer.bytes.length > this.maxBytes) this.drop(this.kept.keys().next().value!);
    this.kept.set(key, answer);
    this.bytes += answer.bytes.length;
  }

  drop(key: string): void {
    const old = this.kept.get(key);
    if (old === undefined) return;
    this.kept.delete(key);
    this.bytes -= old.bytes.length;
  }
}
