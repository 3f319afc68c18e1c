import type { CompiledQuery, Compilable } from 'kysely';

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
