/**
 * Compiles a SOQL filter to a parameterised DuckDB boolean expression over the `events` table
 * (layout in engine/event-record.ts, DDL `schemaSql` in engine/duckdb/duckdb-sql.ts).
 *
 * No text of the query is spliced into the SQL. Every value, LIKE pattern, time bound, number,
 * dataset id and payload path is a `?` parameter; a payload path goes in as an RFC 6901 JSON
 * pointer (`jsonPointer`, `~` and `/` escaped) bound to DuckDB's JSON functions, never as SQL
 * text. The SQL text is built from constants of this file plus, as identifiers, canonical
 * field names, which the parser only admits from the closed list `canonicalFields`. What the
 * query decides is the shape alone: which branches and how many `?` (a bare value that reads
 * as a number adds a numeric branch, `in` one comparison per value). Parameters appear in
 * `params` in the order of their `?`. sql-text.test.ts pins the exact text for a table of
 * queries; the property tests check that random queries only ever yield these characters.
 *
 * Every leaf yields TRUE or FALSE, never NULL (COALESCE), so NOT behaves like the in-memory
 * evaluator (predicate.ts), whose semantics this file mirrors exactly.
 *
 * The result covers the query only: the caller must still AND in the tenant (the event store
 * adds `tenant = ?`, the `events.tenant` integer of `event_tenants`) and the restriction to
 * the tenant's active datasets (soql-compile.ts withinDatasets).
 */
import type { CompareOp, Expr, FieldRef, SoqlQuery, Value } from '../../soql/ast.js';
import { isTextField } from '../../soql/ast.js';
import { isWildcard, payloadReadings, resolveTime } from '../../soql/literals.js';
import { datasetIdsFor, jsonPointer } from '../../soql/scope.js';
import { hotNumber, hotOnlyStringColumn, hotString, hotType, noHotReads, type HotReads } from './duckdb-soql-hot.js';
import { likePattern, SQL_OPS, type CompileContext, type SqlParam } from '../soql-sql.js';

export function compileDuckDbFilter(query: SoqlQuery, ctx: CompileContext): { where: string; params: SqlParam[] } {
  const params: SqlParam[] = [];
  const where = query.filter ? new Compiler(ctx, params).expr(query.filter) : 'TRUE';
  return { where, params };
}

/**
 * A payload node's number, NULL unless the node is a JSON number, with ONE JSON parse per row:
 * the node's JSON text read as a DOUBLE. Only a number's text reads as one (a string's starts
 * with `"`; true, false, null, objects and arrays fail the cast), so no json_type guard is
 * needed: the guard parsed every payload once more, and the parse is most of what a payload
 * aggregate or numeric condition costs (bench/stats-profile.ts compares the forms). Casting
 * the JSON value itself would read "150" and true as numbers, hence the VARCHAR. TRY as in
 * `json` below. `pointer` is the SQL of the JSON pointer (a `?`).
 */
export const duckDbPayloadNumber = (pointer: string): string => `TRY_CAST(CAST(TRY(json_extract(payload, ${pointer})) AS VARCHAR) AS DOUBLE)`;

class Compiler {
  constructor(
    private readonly ctx: CompileContext,
    private readonly params: SqlParam[],
  ) {}

  /** Appends a parameter and returns its placeholder; call in the order the SQL text reads. */
  private p(value: SqlParam): string {
    this.params.push(value);
    return '?';
  }

  /**
   * A DOUBLE parameter. It is sent as text because the driver types a whole JS number as
   * INTEGER/BIGINT and 1e21 would overflow; String(n) is the shortest text that reads back as
   * exactly n, so nothing is lost.
   */
  private double(n: number): string {
    return `CAST(${this.p(String(n))} AS DOUBLE)`;
  }

  expr(e: Expr): string {
    switch (e.type) {
      case 'and':
        return `(${e.items.map((i) => this.expr(i)).join(' AND ')})`;
      case 'or':
        return `(${e.items.map((i) => this.expr(i)).join(' OR ')})`;
      case 'not':
        return `(NOT ${this.expr(e.expr)})`;
      case 'freetext':
        return `COALESCE(message ILIKE ${this.p(likePattern(e.text, false))} ESCAPE '\\', FALSE)`;
      case 'exists':
        return this.exists(e.field);
      case 'compare':
        return this.compare(e.field, e.op, e.value);
      case 'in':
        return `(${e.values.map((v) => this.compare(e.field, '==', v)).join(' OR ')})`;
    }
  }

  /**
   * `fn(payload, pointer)` for one of DuckDB's JSON functions, in TRY: a payload text DuckDB's
   * JSON reader refuses (an escaped unpaired surrogate, which JSON.parse accepted at ingest)
   * reads as NULL, the value of a missing key, instead of failing the whole query
   * (predicate.ts reads such a payload as empty alike).
   */
  private json(fn: 'json_type' | 'json_extract_string' | 'json_extract', pointer: string): string {
    return `TRY(${fn}(payload, ${this.p(pointer)}))`;
  }

  private get hot(): HotReads {
    return this.ctx.hot ?? noHotReads;
  }

  /** json_type of the node, from its hot column where the row has one (duckdb-soql-hot.ts). */
  private type(pointer: string): string {
    return hotType(this.hot, pointer, () => this.json('json_type', pointer));
  }

  private exists(field: FieldRef): string {
    if (field.kind === 'payload') return `(${this.type(jsonPointer(field.path))} IS NOT NULL)`;
    if (field.name === 'actor' || field.name === 'source') return `(${field.name} IS NOT NULL)`;
    return 'TRUE';
  }

  private compare(field: FieldRef, op: CompareOp, value: Value): string {
    if (field.kind === 'payload') return this.payload(jsonPointer(field.path), op, value);
    const col = field.name;
    const sqlOp = SQL_OPS[op];
    if (isTextField(col) && value.type === 'text') {
      if (op === ':' || op === '!:') {
        const like = `${col} ILIKE ${this.p(likePattern(value.text, isWildcard(value.text, value.quoted)))} ESCAPE '\\'`;
        return `COALESCE(${op === ':' ? like : `NOT (${like})`}, FALSE)`;
      }
      return `COALESCE(${col} ${sqlOp} ${this.p(value.text)}, FALSE)`;
    }
    switch (value.type) {
      case 'text': {
        // dataset: names resolve to ids here, so a rename never touches the events.
        const ids = datasetIdsFor(this.ctx.datasetIds, op, value.text);
        if (ids.length === 0) return 'FALSE';
        const inList = `dataset_id IN (${ids.map((id) => this.p(id)).join(', ')})`;
        return op === '!:' || op === '!=' ? `(NOT ${inList})` : `(${inList})`;
      }
      case 'uuid':
        return `(event_id ${sqlOp} CAST(${this.p(value.uuid)} AS UUID))`;
      case 'severity':
        return `(severity ${sqlOp} ${this.p(value.level)})`;
      case 'number':
        return `(bytes_raw ${sqlOp} ${this.double(value.value)})`;
      case 'time':
        return `(${col} ${sqlOp} CAST(${this.p(resolveTime(value.time, this.ctx.now))} AS BIGINT))`;
    }
  }

  /**
   * A payload comparison: one branch per JSON type the value can be compared with, the text,
   * boolean and null ones guarded by json_type (DuckDB may evaluate both sides of an AND); the
   * number branch reads the number, NULL for any other type (duckDbPayloadNumber).
   */
  private payload(pointer: string, op: CompareOp, value: Value): string {
    if (value.type !== 'text') return 'FALSE';
    if (op === '!=' || op === '!:') {
      // The presence test's parameter must be pushed before the ones of the positive test.
      const present = `${this.type(pointer)} IS NOT NULL`;
      return `(${present} AND NOT ${this.payload(pointer, op === '!=' ? '==' : ':', value)})`;
    }
    const r = payloadReadings(value.text, value.quoted);
    const type = (): string => this.type(pointer);
    const str = (): string => hotString(this.hot, pointer, () => this.json('json_extract_string', pointer));
    const num = (): string => hotNumber(this.hot, pointer, () => duckDbPayloadNumber(this.p(pointer)));
    // Held in one string column by every row: its presence is the type test (duckdb-soql-hot.ts).
    const column = hotOnlyStringColumn(this.hot, pointer);
    const isString = (): string => (column ? `${column} IS NOT NULL` : `${type()} = 'VARCHAR'`);
    const branches: string[] = [];
    if (op === ':') {
      const pattern = likePattern(value.text, isWildcard(value.text, value.quoted));
      branches.push(`(${isString()} AND ${str()} ILIKE ${this.p(pattern)} ESCAPE '\\')`);
    } else {
      branches.push(`(${isString()} AND ${str()} ${SQL_OPS[op]} ${this.p(value.text)})`);
    }
    if (r.number !== null) {
      branches.push(`(${num()} ${SQL_OPS[op]} ${this.double(r.number)})`);
    }
    if (op === ':' || op === '==') {
      if (r.boolean !== null) branches.push(`(${type()} = 'BOOLEAN' AND ${str()} = ${this.p(String(r.boolean))})`);
      if (r.isNull) branches.push(`(${type()} = 'NULL')`);
    }
    // The string branch alone on its column is never NULL (FALSE where the key is absent): no
    // COALESCE, which would keep DuckDB from filtering the column in its scan.
    if (column && branches.length === 1) return branches[0]!;
    return `COALESCE(${branches.join(' OR ')}, FALSE)`;
  }
}
