import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql, type CompiledQuery, type MigrationProvider } from 'kysely';
import { FifoSqliteDialect } from './sqlite-dialect.js';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';
import { ReadMostlyCache } from './read-mostly.js';
import { sharedUntilNextTick, walChangeCounter, type ChangeCounter } from './wal-change-counter.js';

export type Dialect = 'sqlite' | 'postgres';

export interface MetadataStore {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  /**
   * Who hears of a pooled PostgreSQL connection that the server closed while idle (a restart, a
   * failover, an administrator). The pool drops that connection and opens another on next use;
   * without a listener the error would end the process.
   */
  onConnectionLost(listener: (error: Error) => void): void;
  /**
   * Runs a read that is served far more often than its data changes. On SQLite the answer is
   * served again until anything is written to the file (exact: see ReadMostlyCache; this
   * process's writes of the usage counters excepted, which it may not read: unstampedTables); on
   * PostgreSQL, where other hosts write unseen, it always runs. The rows must not be modified.
   */
  readMostly<Row>(query: CompiledQuery<Row>): Promise<readonly Row[]>;
  /**
   * Runs writes (inserts, updates, deletes; none returning rows) as one transaction: all commit
   * or none does. For a change and its audit entry when they are the whole transaction (a token
   * creation): on SQLite they run synchronously in one better-sqlite3 transaction once the
   * connection is free, with no await while it is held — Kysely's transaction takes an async
   * hop for BEGIN, each statement and COMMIT, which cost more than SQLite's work; on PostgreSQL
   * in a transaction. A transaction that reads or awaits anything uses `db.transaction()`.
   */
  writeAtomically(queries: readonly CompiledQuery[]): Promise<void>;
  /**
   * ReadMostlyCache's stamp: a number that moves whenever anything is written to the SQLite file,
   * by this process or another (opsctl, a second server), but for this process's own writes of
   * unstampedTables (the usage counters). Undefined on PostgreSQL, where other
   * hosts write unseen. The token cache trusts a token only while it is unchanged.
   */
  readonly changeStamp: (() => number) | undefined;
  close(): Promise<void>;
}

export interface MetadataStoreOptions {
  /** postgres://… or undefined for SQLite under dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
}

export async function openMetadataStore(options: MetadataStoreOptions): Promise<MetadataStore> {
  if (options.databaseUrl) {
    // Loaded only when configured: the embedded default does not carry the driver in memory.
    const { default: pg } = await import('pg');
    // int8 (bigint) columns hold byte and event counts far below 2^53: read them as numbers.
    pg.types.setTypeParser(20, (value: string) => Number(value));
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    let connectionLost: (error: Error) => void = () => {};
    pool.on('error', (error) => connectionLost(error));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    await migrate(db);
    return {
      db,
      dialect: 'postgres',
      ping: async () => void (await sql`select 1`.execute(db)),
      onConnectionLost: (listener) => void (connectionLost = listener),
      readMostly: async (query) => (await db.executeQuery(query)).rows,
      writeAtomically: async (queries) => {
        if (queries.length === 1) await db.executeQuery(queries[0]!);
        else {
          await db.transaction().execute(async (trx) => {
            for (const query of queries) await trx.executeQuery(query);
          });
        }
      },
      changeStamp: undefined,
      close: () => db.destroy(),
    };
  }
  fs.mkdirSync(options.dataDir, { recursive: true });
  const file = path.join(options.dataDir, 'metadata.sqlite');
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  // opsctl and the server share the file: wait for a writer instead of failing at once.
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  const statements = withStatementCache(database);
  const dialect = new FifoSqliteDialect({ database: statements });
  const db = new Kysely<Database>({ dialect });
  const writeAll = sqliteWriteAll(database, statements);
  await migrate(db);
  const otherCommits = walChangeCounter(database, file);
  statements.commitsOwnWritesThrough(otherCommits);
  // One pread answers every stamp check of the synchronous code running now (a request's token
  // and its read-mostly lists), read again once any statement has run on a connection of this
  // process: what it read may be newer (sharedUntilNextTick says why this is exact).
  const otherCommitsNow = sharedUntilNextTick(otherCommits.read, () => statementsStarted);
  // Both counters only grow, so their sum moves whenever either does.
  const changeStamp = () => statements.writes() + otherCommitsNow();
  const cache = new ReadMostlyCache(changeStamp, unstampedTables);
  return {
    db,
    dialect: 'sqlite',
    ping: async () => void (await sql`select 1`.execute(db)),
    // An embedded file has no connection to lose.
    onConnectionLost: () => {},
    readMostly: (query) => cache.read(query, async () => (await db.executeQuery(query)).rows),
    writeAtomically: (queries) => dialect.exclusive(() => writeAll(queries)),
    changeStamp,
    close: async () => {
      otherCommits.close();
      await db.destroy();
    },
  };
}

/**
 * SQLite does not stop an ordered index walk early when LIMIT is a bare bound parameter, as
 * Kysely writes it (`limit ?`): a page of 2 read every row of the tenant (measured: 40 µs
 * against 13 µs for 21 rows, and it grows with the tenant). Wrapped in an expression, the
 * limit is applied during the walk again. Kysely's SQL text never holds literals, so the
 * rewrite cannot touch a value.
 */
export const sqliteLimitFix = (text: string): string => text.replace(/ (limit|offset) \?/g, ' $1 cast(? as integer)');

/**
 * Tables whose writes by this process do not move the change stamp (MetadataStore.changeStamp):
 * the usage counters, written on every query and ingest (quota-service.ts) and read by no cached
 * read — ReadMostlyCache refuses a read that names them, and the token lookup does not. Left
 * out, a POST /v1/query no longer makes the next request of any kind read its token and lists
 * again. Commits by other processes, to these tables too, move the stamp as ever.
 */
export const unstampedTables = ['usage_counters'] as const;
/** Kysely's text of a statement that writes only those tables (no triggers write elsewhere from them). */
const unstampedWrite = new RegExp(`^(insert into|update) "(${unstampedTables.join('|')})" `);

/**
 * Statements begun on any SQLite metadata connection of this process (each is prepared right
 * before it runs: Kysely's driver and writeAtomically do): a stamp shared by the code running now
 * (sharedUntilNextTick) is read again after one, since that statement may have seen a newer commit.
 */
let statementsStarted = 0;

/**
 * Preparing a statement costs more than running it for our short queries, and Kysely prepares
 * on every call; better-sqlite3 statements are reusable once finished (all/run), so keep them.
 */
function withStatementCache(database: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  let writes = 0;
  let commits: ChangeCounter | undefined;
  return {
    prepare(text: string): SQLite.Statement {
      statementsStarted++;
      let statement = statements.get(text);
      if (!statement) {
        if (statements.size >= 1000) statements.clear();
        statement = database.prepare(sqliteLimitFix(text));
        if (unstampedWrite.test(text)) statement = unstamped(statement);
        statements.set(text, statement);
      }
      // Kysely prepares before every execution and runs at once: counting here counts each
      // write before it runs, for ReadMostlyCache's stamp. `readonly`, not `reader`: an
      // INSERT … RETURNING returns rows but writes.
      if (!statement.readonly && !unstampedStatements.has(statement)) writes++;
      return statement;
    },
    writes: () => writes,
    /** From now on, a write of unstampedTables outside a transaction runs through `counter.runOwn` and is not counted. */
    commitsOwnWritesThrough(counter: ChangeCounter): void {
      commits = counter;
    },
    close(): void {
      statements.clear();
      database.close();
    },
  };

  /**
   * A write of unstampedTables: Kysely runs it with `run` (it is no reader). Inside a
   * transaction, or before the change counter is there, it counts as any write (the commit
   * that follows is counted too); outside one, its own commit is left out of the counter.
   */
  function unstamped(statement: SQLite.Statement): SQLite.Statement {
    const run = (...params: unknown[]): SQLite.RunResult => {
      if (commits === undefined || database.inTransaction) {
        writes++;
        return statement.run(...params);
      }
      return commits.runOwn(() => statement.run(...params)) as SQLite.RunResult;
    };
    // What Kysely's SQLite driver asks of a statement it runs (reader, then run or all).
    const wrapped = {
      reader: statement.reader,
      readonly: statement.readonly,
      source: statement.source,
      run,
      all: (...params: unknown[]) => statement.all(...params),
      get: (...params: unknown[]) => statement.get(...params),
      iterate: (...params: unknown[]) => statement.iterate(...params),
    } as unknown as SQLite.Statement;
    unstampedStatements.add(wrapped);
    return wrapped;
  }
}

const unstampedStatements = new WeakSet<SQLite.Statement>();

/**
 * writeAtomically's SQLite half, to run while its caller alone holds the connection. A statement
 * on its own commits alone; several run in one transaction (BEGIN IMMEDIATE: the write lock is
 * taken, or waited for under busy_timeout, before the first statement). Through the statement
 * cache, so each write moves the change stamp as Kysely's do.
 */
function sqliteWriteAll(database: SQLite.Database, statements: ReturnType<typeof withStatementCache>): (queries: readonly CompiledQuery[]) => void {
  const run = (query: CompiledQuery) => void statements.prepare(query.sql).run(query.parameters);
  const all = database.transaction((queries: readonly CompiledQuery[]) => {
    for (const query of queries) run(query);
  });
  return (queries) => {
    // Outside any transaction, or better-sqlite3 would nest these in it (a savepoint) and they
    // would commit or roll back with whatever holds it: the connection's turn rules that out.
    if (database.inTransaction) throw new Error('writeAtomically: the connection is inside a transaction');
    if (queries.length === 1) run(queries[0]!);
    else all.immediate(queries);
  };
}

const provider: MigrationProvider = { getMigrations: async () => migrations };

async function migrate(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? '');
    throw new Error(`metadata migration ${failed?.migrationName ?? ''} failed: ${cause}`);
  }
}
