import { SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDialectConfig } from 'kysely';

/**
 * Kysely's SQLite driver shares its one connection through a mutex whose unlock wakes every
 * waiter at once; all but one go back to sleep. Under 32 concurrent requests that is ~31
 * wasted wake-ups per query, which cost more than the query. This driver hands the
 * connection to exactly one waiter, in arrival order, so the inner mutex is never contended.
 */
class FifoSqliteDriver extends SqliteDriver {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  override async acquireConnection(): Promise<DatabaseConnection> {
    const wait = this.turn();
    if (wait) await wait;
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    this.pass();
  }

  /**
   * Runs `work` as the connection's only user, in its turn: at once (synchronously, in this
   * call) when nobody holds the connection, otherwise after those waiting before it. `work`
   * must be synchronous: nothing else runs while it does, so no other query — a Kysely
   * transaction's included — can land between its statements.
   */
  async exclusive<T>(work: () => T): Promise<T> {
    const wait = this.turn();
    if (wait) await wait;
    try {
      return work();
    } finally {
      this.pass();
    }
  }

  /** Resolves once this caller holds the connection; without an await when it is free. */
  private turn(): Promise<void> | undefined {
    if (!this.held) {
      this.held = true;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private pass(): void {
    const next = this.waiters.shift();
    // Ownership passes straight to the next waiter; `held` stays true.
    if (next) next();
    else this.held = false;
  }
}

export class FifoSqliteDialect extends SqliteDialect {
  private driver: FifoSqliteDriver | undefined;

  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    this.driver = new FifoSqliteDriver(this.config);
    return this.driver;
  }

  /** FifoSqliteDriver.exclusive of the driver the Kysely instance on this dialect uses. */
  exclusive<T>(work: () => T): Promise<T> {
    if (!this.driver) throw new Error('no Kysely instance uses this dialect yet');
    return this.driver.exclusive(work);
  }
}
