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
    if (this.held) await new Promise<void>((resolve) => this.waiters.push(resolve));
    else this.held = true;
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    const next = this.waiters.shift();
    // Ownership passes straight to the next waiter; `held` stays true.
    if (next) next();
    else this.held = false;
  }
}

export class FifoSqliteDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    return new FifoSqliteDriver(this.config);
  }
}
