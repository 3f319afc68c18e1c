import { CompiledQuery, SqliteAdapter, type Kysely } from 'kysely';
import { precompileInsert } from '../stores/metadata/precompiled.js';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import { newId } from '../shared/ids.js';
import { iso } from '../shared/clock.js';
import { operatorOrigin, type Origin } from '../tenancy/origin.js';
import type { AuditEntriesTable } from './tables.js';
import './tables.js';

/** Every action the audit log records (DECISIONS.md §20; `sso.*` for single sign-on, §22). */
export const auditActions = [
  'token.create',
  'token.revoke',
  'member.invite',
  'member.role_change',
  'member.remove',
  'user.sign_in',
  'user.password_set',
  'org.create',
  'org.plan_change',
  'org.owner_transfer',
  'project.create',
  'dataset.create',
  'dataset.update',
  'dataset.archive',
  'file.delete',
  'file.restore',
  'file.purge',
  'monitor.create',
  'monitor.update',
  'monitor.delete',
  'channel.create',
  'channel.update',
  'channel.delete',
  'sso.configure',
  'sso.sign_in',
  'sso.domain_verify',
] as const;

export type AuditAction = (typeof auditActions)[number];

/** A detail's value: plain data, never an object that could smuggle a secret in unseen. */
export type DetailValue = string | number | boolean | null | readonly string[];

export interface AuditChange {
  action: AuditAction;
  /** Who acted; undefined → the operator (opsctl, the server's own jobs). */
  origin: Origin | undefined;
  orgId: string;
  /** Set for changes inside one project and mode (a file, a dataset…); absent for organisation-wide ones. */
  projectId?: string;
  mode?: 'live' | 'test';
  target: { type: string; id: string };
  /** When the change happened (the service's clock), epoch milliseconds. */
  at: number;
  /** 'failure' for a refused attempt worth keeping (a refused sign-in); default 'success'. */
  outcome?: 'success' | 'failure';
  details?: Readonly<Record<string, DetailValue>>;
}

/**
 * Keys that name a secret are dropped from details, whatever a caller passes: the last guard of
 * "never a secret in an entry" (the test suite scans every entry it makes for its secrets).
 */
const secretKey = /secret|password|token|url|hash|authorization|cookie/i;

function safeDetails(details: AuditChange['details']): string {
  if (!details) return '{}';
  const kept: Record<string, DetailValue> = {};
  for (const [key, value] of Object.entries(details)) if (!secretKey.test(key)) kept[key] = value;
  return JSON.stringify(kept);
}

/** The organisation, project and mode part of a change, and who acted: from the tenant that carries it. */
export const inTenant = (tenant: Tenant): Pick<AuditChange, 'origin' | 'orgId' | 'projectId' | 'mode'> => ({
  origin: tenant.origin,
  orgId: tenant.orgId,
  projectId: tenant.projectId,
  mode: tenant.mode,
});

export function auditRow(change: AuditChange): AuditEntriesTable {
  const origin = change.origin ?? operatorOrigin();
  return {
    id: newId.audit(),
    org_id: change.orgId,
    ts: iso(change.at),
    action: change.action,
    actor_type: origin.actor.type,
    actor_id: origin.actor.id,
    actor_name: origin.actor.name,
    target_type: change.target.type,
    target_id: change.target.id,
    project_id: change.projectId ?? null,
    mode: change.mode ?? null,
    request_id: origin.requestId,
    ip: origin.ip,
    user_agent: origin.userAgent,
    outcome: change.outcome ?? 'success',
    details: safeDetails(change.details),
  };
}

/**
 * Records one change. `trx` is the transaction that makes the change: the entry commits with it
 * or not at all (a change without its entry, or an entry without its change, cannot exist).
 * The one way any service writes the audit log, but for `entry`.
 */
export async function record(trx: Kysely<Database>, change: AuditChange): Promise<void> {
  await trx.executeQuery(entry(trx, change));
}

/**
 * The entry's insert, for a service that runs it in the same MetadataStore.writeAtomically as the
 * change it records (the change and its entry the whole transaction: a token creation). Never
 * run alone.
 */
export function entry(db: Kysely<Database>, change: AuditChange): CompiledQuery {
  return insertOf(db)(auditRow(change));
}

const columns = [
  'id',
  'org_id',
  'ts',
  'action',
  'actor_type',
  'actor_id',
  'actor_name',
  'target_type',
  'target_id',
  'project_id',
  'mode',
  'request_id',
  'ip',
  'user_agent',
  'outcome',
  'details',
] as const satisfies ReadonlyArray<keyof AuditEntriesTable>;
type InsertQuery = (row: AuditEntriesTable) => CompiledQuery;
/**
 * The insert, compiled once per database (its dialect's SQL) rather than built on every change:
 * building and compiling a 16-column insert with Kysely cost more than SQLite takes to run it,
 * on every token creation (bench:http's tokens row). Keyed by the dialect's adapter, which a
 * Kysely instance and its transactions share.
 */
const inserts = new WeakMap<object, InsertQuery>();
function insertOf(db: Kysely<Database>): InsertQuery {
  const adapter = db.getExecutor().adapter;
  let insert = inserts.get(adapter);
  if (!insert) {
    insert = adapter instanceof SqliteAdapter ? sqliteInsert : precompileInsert(db, 'audit_entries', columns);
    inserts.set(adapter, insert);
  }
  return insert;
}

/**
 * SQLite (migration 0019): the entry is appended with the next `seq` (the rowid, given under the
 * write lock: commit order), and its `ts` is stamped in the same statement, so under that lock
 * too — the change's time, raised to the previous entry's `ts` when it is earlier (a change that
 * waited for the lock behind a later one, a clock stepped back). Sequence and time then agree,
 * which the list's `from` / `to` and its order by `seq` rely on (audit-service.ts). Whatever
 * runs this insert — writeAtomically, a Kysely transaction with an Idempotency-Key — follows
 * the rule. The previous entry is the table's last row: its right-most leaf, already in cache.
 * ISO 8601 UTC timestamps with milliseconds compare as text.
 */
const sqliteInsertSql = `insert into "audit_entries" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns
  .map((c) => (c === 'ts' ? `max(?, coalesce((select "ts" from "audit_entries" order by "seq" desc limit 1), ''))` : '?'))
  .join(', ')})`;
const sqliteInsert: InsertQuery = (row) => CompiledQuery.raw(sqliteInsertSql, columns.map((c) => row[c]));

/** Several changes of one transaction (a purge's batch). */
export async function recordAll(trx: Kysely<Database>, changes: readonly AuditChange[]): Promise<void> {
  if (!changes.length) return;
  // SQLite stamps each entry against the one before it: one statement per entry (a rare path:
  // a sign-in in each of a user's organisations).
  if (trx.getExecutor().adapter instanceof SqliteAdapter) for (const change of changes) await record(trx, change);
  else await trx.insertInto('audit_entries').values(changes.map(auditRow)).execute();
}

export const audit = { record, recordAll, entry };
