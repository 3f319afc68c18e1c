/**
 * Runs work one after another per key, in this process: e.g. creations under a per-organisation
 * cap (datasets, monitors), so two concurrent requests cannot both pass the count. A key's entry
 * goes away once its last work has settled.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.tails.set(key, settled);
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key);
    });
    return next;
  }
}
