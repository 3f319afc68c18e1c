import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * A query built and compiled once, run many times with other values. Building a Kysely
 * query costs more than SQLite takes to run a short one, so hot paths (token lookup, lists
 * served on every page view) compile at start-up with placeholder values, which are swapped
 * for the real ones on each call. The SQL text stays Kysely's, so the statement cache and
 * both dialects work unchanged.
 *
 * Usage: `precompile((p) => db.selectFrom('t').where('id', '=', p('id')), ['id'])`,
 * then `query({ id: 'x' })` gives the CompiledQuery to pass to `db.executeQuery`.
 */
export function precompile<Row, Name extends string>(
  build: (placeholder: (name: Name) => string) => Compilable<Row>,
  names: readonly Name[],
): (values: Record<Name, unknown>) => CompiledQuery<Row> {
  // Sentinels no caller can send: they hold a NUL and a per-call-site marker.
  const sentinel = (name: Name) => `\u0000precompiled:${name}`;
  const compiled = build(sentinel).compile();
  const byPosition = compiled.parameters.map((value) => {
    const name = names.find((n) => sentinel(n) === value);
    return { name, fixed: name === undefined ? value : undefined };
  });
  for (const name of names) {
    if (!byPosition.some((slot) => slot.name === name)) {
      throw new Error(`precompiled query does not use its parameter ${name}`);
    }
  }
  return (values) => ({
    ...compiled,
    parameters: byPosition.map((slot) => (slot.name === undefined ? slot.fixed : values[slot.name])),
  });
}

/**
 * An insert of one row into `table`, every column in `columns` a parameter: `insert(row)` gives
 * the CompiledQuery (row's other keys are ignored). For rows written on hot paths (a token and
 * its audit entry), where building a many-column insert with Kysely costs about what SQLite
 * takes to run it.
 */
export function precompileInsert<Table extends keyof Database & string, Column extends keyof Database[Table] & string>(
  db: Kysely<Database>,
  table: Table,
  columns: readonly Column[],
): (row: Record<Column, unknown>) => CompiledQuery {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each value is a placeholder string, whatever the column's type
  return precompile((p) => db.insertInto(table).values(Object.fromEntries(columns.map((c) => [c, p(c)])) as any), columns);
}
