/**
 * Answers of reads kept under a tenant's change count and served again while the count is
 * unchanged: the events owner's page and rollup caches (logged-event-store.ts, counts in its
 * memory) and a worker's (remote-event-store.ts, counts on the node's change board) share it.
 * The count is taken by the caller before the read starts, so an answer is never kept under a
 * count that moved while it was being read. A full cache drops its oldest entry.
 */
export class UnchangedAnswers<T> {
  private readonly kept = new Map<string, { change: number; value: Promise<T> }>();

  constructor(private readonly max: number) {}

  /** The answer kept under `key` when its count is `change`, else `read()`'s, kept in its place. */
  get(key: string, change: number, read: () => Promise<T>): Promise<T> {
    const entry = this.kept.get(key);
    if (entry?.change === change) return entry.value;
    const value = read();
    if (entry) this.kept.delete(key);
    else if (this.kept.size >= this.max) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(key, { change, value });
    // A failed read is not an answer: the next request reads again.
    value.catch(() => {
      if (this.kept.get(key)?.value === value) this.kept.delete(key);
    });
    return value;
  }
}

/** Filter values only of the kinds JSON spells one way each (not dates, bigints, buffers): only those key a kept page. */
export const keyableParams = (params: ReadonlyArray<unknown>): boolean =>
  params.every((v) => v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)));
