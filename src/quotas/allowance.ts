/**
 * Units of a periodic quota this process has already charged to the metadata store and not yet
 * used: an allowance, so that a busy organisation's queries do not each commit an upsert.
 *
 * Why: charging `queries_month` was one SQLite (or PostgreSQL) commit per POST /query — a large
 * part of a cached query page's CPU. Here the
 * first query of a quiet organisation is charged alone, as before; while queries keep coming
 * (the next charge within `burstMs` of the last), each charge takes twice as many units as the
 * last, up to `maxBlock`, and the queries that follow are served from them in memory. The limit
 * is exact: a block is charged by the same conditional upsert as any charge (`used + n <=
 * limit`), and a block that no longer fits falls back to one unit, so no two processes ever pass
 * the limit together. What changes (docs/decisions.md, "Query charges in blocks"): units charged
 * but not yet used count as used for the other processes until they are given back — after
 * `idleMs` without a query of that organisation, or when the process closes — so another
 * process may refuse a query up to `maxBlock` units before the limit while this one holds them;
 * a process killed with units in hand leaves them counted (at most `maxBlock` per organisation).
 * This process's own usage answers subtract what it holds, so they are exact here.
 */
export interface AllowanceStore {
  /** Adds `amount` to the counter within the limit, or throws (402 quota_exceeded). */
  charge(orgId: string, plan: string, amount: number): Promise<void>;
  /** Gives back `amount` units of `period`. */
  giveBack(orgId: string, amount: number, period: string): Promise<void>;
  /** The current period's key (the month). */
  period(): string;
}

interface Held {
  orgId: string;
  period: string;
  /** Units charged and not yet used. */
  left: number;
  /** Size of the last block charged. */
  block: number;
  /** performance.now() of the last charge and of the last use. */
  chargedAt: number;
  usedAt: number;
  /** The charge in flight, which requests finding nothing held wait for. */
  charging: Promise<void> | undefined;
}

export class QuotaAllowance {
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: AllowanceStore,
    private readonly options: { maxBlock: number; burstMs: number; idleMs: number } = { maxBlock: 64, burstMs: 1_000, idleMs: 1_000 },
  ) {}

  /**
   * Uses one unit: from what this process holds, else by charging a block (or one unit). One
   * charge per organisation at a time: requests that find nothing held wait for the charge in
   * flight and share its block, so none is refused while this process is about to hold units.
   */
  async take(orgId: string, plan: string): Promise<void> {
    for (;;) {
      const period = this.store.period();
      const key = `${orgId}\u0000${period}`;
      let held = this.held.get(key);
      if (held !== undefined && held.left > 0) {
        held.left--;
        held.usedAt = performance.now();
        return;
      }
      if (held?.charging) {
        await held.charging.catch(() => undefined);
        continue;
      }
      if (held === undefined) {
        held = { orgId, period, left: 0, block: 0, chargedAt: -Infinity, usedAt: 0, charging: undefined };
        if (!this.closed) this.held.set(key, held);
      }
      const entry = held;
      const charge = this.charge(entry, plan);
      entry.charging = charge;
      try {
        await charge;
      } finally {
        entry.charging = undefined;
        this.schedule();
      }
      return;
    }
  }

  /** Charges the next block for `held` (doubling while charges come within burstMs), keeping all but the unit used now. */
  private async charge(held: Held, plan: string): Promise<void> {
    const now = performance.now();
    const block = this.closed ? 1 : now - held.chargedAt < this.options.burstMs ? Math.min(Math.max(held.block * 2, 1), this.options.maxBlock) : 1;
    let charged = block;
    try {
      await this.store.charge(held.orgId, plan, block);
    } catch (error) {
      if (block === 1) throw error;
      // The block does not fit under the limit: one unit may (the limit stays exact).
      charged = 1;
      await this.store.charge(held.orgId, plan, 1);
    }
    held.left += charged - 1;
    held.block = charged;
    held.chargedAt = held.usedAt = performance.now();
  }

  /** Units held of an organisation's current period (its usage, as this process answers it, subtracts them). */
  holding(orgId: string): number {
    return this.held.get(`${orgId}\u0000${this.store.period()}`)?.left ?? 0;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.giveBackIdle(false);
    }, this.options.idleMs);
    this.timer.unref();
  }

  /** Gives back what idle organisations hold (all of it when `all`); keeps the timer while any is held. */
  private async giveBackIdle(all: boolean): Promise<void> {
    const now = performance.now();
    const given: Promise<void>[] = [];
    for (const [key, held] of this.held) {
      if (held.charging || (!all && now - held.usedAt < this.options.idleMs)) continue;
      this.held.delete(key);
      // A give-back that fails (the store down) leaves the units counted: in the organisation's
      // disfavour by at most one block, as a process killed with units in hand.
      if (held.left > 0) given.push(this.store.giveBack(held.orgId, held.left, held.period).catch(() => undefined));
    }
    if (this.held.size > 0) this.schedule();
    await Promise.all(given);
  }

  /** Gives back every unit held; later charges are one unit each (a closing process holds none). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([...this.held.values()].map((held) => held.charging?.catch(() => undefined)));
    await this.giveBackIdle(true);
  }
}
