import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationProvider } from 'kysely';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

export type Dialect = 'sqlite' | 'postgres';

export interface MetadataStore {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface MetadataStoreOptions {
  /** postgres://… or undefined for SQLite under dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
}

// int8 (bigint) columns hold byte and event counts far below 2^53: read them as numbers.
pg.types.setTypeParser(20, (value: string) => Number(value));

export async function openMetadataStore(options: MetadataStoreOptions): Promise<MetadataStore> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    await migrate(db);
    return {
      db,
      dialect: 'postgres',
      ping: async () => void (await sql`select 1`.execute(db)),
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
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  await migrate(db);
  return {
    db,
    dialect: 'sqlite',
    ping: async () => void (await sql`select 1`.execute(db)),
    close: () => db.destroy(),
  };
}

/**
 * Preparing a statement costs more than running it for our short queries, and Kysely prepares
 * on every call; better-sqlite3 statements are reusable once finished (all/run), so keep them.
 */
function withStatementCache(database: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(text: string): SQLite.Statement {
      let statement = statements.get(text);
      if (!statement) {
        if (statements.size >= 1000) statements.clear();
        statement = database.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
    close(): void {
      statements.clear();
      database.close();
    },
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
