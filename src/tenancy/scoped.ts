import { sql, type DeleteQueryBuilder, type DeleteResult, type Kysely, type SelectQueryBuilder, type SqlBool, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from './tenant.js';

/** Tables that hold tenant data: every row carries org_id, project_id and mode. */
export type TenantTable = {
  [K in keyof Database]: Database[K] extends { org_id: string; project_id: string; mode: string } ? K : never;
}[keyof Database];

type AnyTenantTable = 'api_tokens';

const tenantFilter = (table: string, tenant: Tenant) =>
  sql<SqlBool>`${sql.ref(`${table}.org_id`)} = ${tenant.orgId} and ${sql.ref(`${table}.project_id`)} = ${tenant.projectId} and ${sql.ref(`${table}.mode`)} = ${tenant.mode}`;

/**
 * The only way capability code reads or changes tenant tables: every statement it starts
 * already filters on the tenant, so a query cannot forget it, and rows it writes carry it.
 */
export function scoped(db: Kysely<Database>, tenant: Tenant) {
  return {
    // Kysely cannot resolve `where` on a generic table; the filter is applied on one concrete
    // table type and the builder handed back typed for T: the SQL is the same for every table.
    selectFrom<T extends TenantTable>(table: T): SelectQueryBuilder<Database, T, object> {
      const builder = db.selectFrom(table as AnyTenantTable).where(tenantFilter(table, tenant));
      return builder as unknown as SelectQueryBuilder<Database, T, object>;
    },
    updateTable<T extends TenantTable>(table: T): UpdateQueryBuilder<Database, T, T, UpdateResult> {
      const builder = db.updateTable(table as AnyTenantTable).where(tenantFilter(table, tenant));
      return builder as unknown as UpdateQueryBuilder<Database, T, T, UpdateResult>;
    },
    deleteFrom<T extends TenantTable>(table: T): DeleteQueryBuilder<Database, T, DeleteResult> {
      const builder = db.deleteFrom(table as AnyTenantTable).where(tenantFilter(table, tenant));
      return builder as unknown as DeleteQueryBuilder<Database, T, DeleteResult>;
    },
    /** The tenant columns of a new row. */
    row: { org_id: tenant.orgId, project_id: tenant.projectId, mode: tenant.mode },
  };
}
