import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * SQLite: the audit log is appended in commit order and keeps no index per entry (
 * docs/audit.md "Order and layout"). An entry's `(org_id, ts, id)` index entry landed mid-tree,
 * after its organisation's last one, and its page splits wrote several WAL frames per commit; a
 * row appended at the table's right edge writes about one (bench/audit-frames.ts counts them). So:
 * - `seq` is the rowid (INTEGER PRIMARY KEY, no AUTOINCREMENT, which would write
 *   sqlite_sequence's page on every insert): assigned under the write lock, so its order is
 *   commit order; record.ts stamps `ts` in the same statement, never below the previous entry's.
 * - `audit_blocks` finds an organisation's entries: one row per organisation and block of 1,024
 *   sequence numbers that holds one of its entries, with the `ts` of its first there (a lower
 *   bound of its entries in that block: the list skips blocks past `to` and stops below `from`).
 *   Written by a trigger, once per organisation and block (an ignored insert writes no page).
 * Existing entries are copied in (ts, id) order, so sequence and time agree from the start.
 *
 * PostgreSQL keeps 0014's layout (its index on (org_id, ts, id)): nothing changes there.
 */
const blockBits = 10;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  await sql`create table audit_entries_seq (
    seq integer primary key,
    org_id text not null,
    ts text not null,
    id text not null,
    action text not null,
    actor_type text not null,
    actor_id text not null,
    actor_name text not null,
    target_type text not null,
    target_id text not null,
    project_id text,
    mode text,
    request_id text not null,
    ip text not null,
    user_agent text not null,
    outcome text not null,
    details text not null
  )`.execute(db);
  await sql`insert into audit_entries_seq (org_id, ts, id, action, actor_type, actor_id, actor_name, target_type, target_id, project_id, mode, request_id, ip, user_agent, outcome, details)
    select org_id, ts, id, action, actor_type, actor_id, actor_name, target_type, target_id, project_id, mode, request_id, ip, user_agent, outcome, details
    from audit_entries order by ts, id`.execute(db);
  await sql`drop table audit_entries`.execute(db);
  await sql`alter table audit_entries_seq rename to audit_entries`.execute(db);
  await sql`create table audit_blocks (
    org_id text not null,
    block integer not null,
    ts text not null,
    primary key (org_id, block)
  ) without rowid`.execute(db);
  await sql`insert into audit_blocks (org_id, block, ts)
    select org_id, seq >> ${sql.lit(blockBits)}, min(ts) from audit_entries group by org_id, seq >> ${sql.lit(blockBits)}`.execute(db);
  // A trigger rather than a statement of each writer: every write path (writeAtomically, a
  // Kysely transaction, a multi-row insert) keeps the blocks right, and it runs fewer instructions
  // per commit than a third statement in writeAtomically (bench/audit-frames.ts BLOCK_STATEMENT=1
  // under callgrind).
  await sql`create trigger audit_entries_block after insert on audit_entries begin
    insert or ignore into audit_blocks (org_id, block, ts) values (new.org_id, new.seq >> ${sql.lit(blockBits)}, new.ts);
  end`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  await sql`drop trigger audit_entries_block`.execute(db);
  await sql`drop table audit_blocks`.execute(db);
  // Back to 0014's columns and index (its NOT NULLs are not restored: no code path writes a NULL).
  await sql`create table audit_entries_ts as select id, org_id, ts, action, actor_type, actor_id, actor_name, target_type, target_id, project_id, mode, request_id, ip, user_agent, outcome, details from audit_entries order by seq`.execute(db);
  await sql`drop table audit_entries`.execute(db);
  await sql`alter table audit_entries_ts rename to audit_entries`.execute(db);
  await db.schema.createIndex('audit_entries_org_ts').on('audit_entries').columns(['org_id', 'ts', 'id']).execute();
}
