/**
 * Compiles a SOQL filter to a ClickHouse boolean expression (UInt8, 1 or 0) over the `events`
 * table of the ClickHouse engine (engine/clickhouse/), with exactly the semantics of
 * compileDuckDbFilter (duckdb-soql.ts) and the in-memory evaluator (predicate.ts).
 * docs/soql-clickhouse.md maps each construct and lists the known gaps.
 *
 * The target is ClickHouse 18.16 (Debian's); every function used also exists, with the same
 * meaning, on current servers (tested here on 18.16 only):
 * - no server-side query parameters: the SQL text is built from constants of this file (and,
 *   as identifiers, canonical field names from the parser's closed list) with `?` placeholders;
 *   the engine binds every `?` with engine/clickhouse/literal.ts (`bindParams`). No
 *   constant string literal here contains a `?`. `params` are in the order of their `?`.
 * - no ILIKE: case-insensitive matching is `fold(x) LIKE fold(?)` with `fold` = lowerUTF8 after
 *   replacing U+0130 (İ) with `i`, the one mapping of the test alphabet where 18.16's lowerUTF8
 *   differs from predicate.ts's foldCase (see `fold`).
 * - no JSON path functions: a payload field reads the payload flattened at load time
 *   (payload-paths.ts): `indexOf(payload_paths, ?)` with the RFC 6901 pointer (`jsonPointer`,
 *   as on DuckDB), and the type, text and number arrays at that index (index 0, the missing
 *   node, gives type 0 and no value).
 * - no `true`/`false`: 1 and 0.
 * - float parsing in 18.16 (toFloat64 of a string, and the text input formats) is off by one
 *   ulp for many values in exponent notation and reads subnormals as 0, so a number is bound
 *   as its IEEE 754 bytes, `reinterpretAsFloat64(unhex(?))`, which is exact on every version.
 * - two 18.16 bugs with U+0000 in strings, found by clickhouse/soql-agreement.test.ts: `a <= b` and
 *   `a >= b` answer 1 when one string is the other followed by U+0000 (`'a\0' <= 'a'`), while
 *   `<`, `>`, `=` and `<>` are right, so `<=` is written `NOT (a > b)` and `>=` `NOT (a < b)`;
 *   and LIKE with a pattern holding U+0000 that starts with `%` (and is not a plain
 *   `%needle%`) matches wrongly, so such a pattern, and the text, get a constant first
 *   character (`concat('x', …)`), which never changes what matches.
 *
 * Every leaf yields 1 or 0, never NULL (ifNull on the Nullable actor and source, like DuckDB's
 * COALESCE), so NOT behaves like predicate.ts. The result covers the query only: the engine
 * ANDs in the tenant and soql-read.ts the tenant's active datasets (withinDatasets).
 */
import type { CompareOp, Expr, FieldRef, SoqlQuery, Value } from '../../soql/ast.js';
import { isTextField } from '../../soql/ast.js';
import { datasetIdsFor, jsonPointer } from '../../soql/scope.js';
import { likePattern, SQL_OPS, type CompileContext, type SqlParam } from '../soql-sql.js';
import { isWildcard, payloadReadings, resolveTime } from '../../soql/literals.js';
import { payloadType } from './payload-paths.js';
import { float64Hex } from './literal.js';
import { hotColumnOf, hotGuard } from './clickhouse-soql-hot.js';

export function compileClickHouseFilter(query: SoqlQuery, ctx: CompileContext): { where: string; params: SqlParam[] } {
  const params: SqlParam[] = [];
  const where = query.filter ? new Compiler(ctx, params).expr(query.filter) : '1';
  // Hot columns read: only the rows of the layouts they were chosen for (clickhouse-soql-hot.ts).
  const guard = hotGuard(ctx.clickHouseHot);
  return { where: guard ? `(${guard} AND ${where})` : where, params };
}


/**
 * The case folding of predicate.ts's foldCase (per code point, simple mapping) in ClickHouse:
 * lowerUTF8 agrees with it on every code point except 600 that 18.16 leaves unchanged
 * (docs/soql-clickhouse.md lists them). U+0130 (İ, which foldCase turns into `i`) is one of
 * them and common enough in text to be mapped here; `\xC4\xB0` is its UTF-8 in the literal.
 */
const fold = (sql: string): string => `lowerUTF8(replaceAll(${sql}, '\\xC4\\xB0', 'i'))`;

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

  /** A Float64 parameter, exact (see the header: 18.16 parses float text inexactly). */
  private double(n: number): string {
    return `reinterpretAsFloat64(unhex(${this.p(float64Hex(n))}))`;
  }

  /**
   * Case-insensitive LIKE of a text expression against a pattern of `likePattern`. A pattern
   * with U+0000 takes the `concat('x', …)` form (see the header); others keep the plain form,
   * whose `%needle%` ClickHouse runs as a substring search rather than a regular expression.
   */
  private like(sql: string, pattern: string): string {
    const text = fold(sql);
    const like = fold(this.p(pattern));
    return pattern.includes('\0') ? `concat('x', ${text}) LIKE concat('x', ${like})` : `${text} LIKE ${like}`;
  }

  /** `sql <op> ?` for a string; `<=` and `>=` through the negation of `>` and `<` (see the header). */
  private textCompare(sql: string, op: CompareOp, text: string): string {
    if (op === '<=') return `NOT (${sql} > ${this.p(text)})`;
    if (op === '>=') return `NOT (${sql} < ${this.p(text)})`;
    return `${sql} ${SQL_OPS[op]} ${this.p(text)}`;
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
        return `ifNull(${this.like('message', likePattern(e.text, false))}, 0)`;
      case 'exists':
        return this.exists(e.field);
      case 'compare':
        return this.compare(e.field, e.op, e.value);
      case 'in':
        return `(${e.values.map((v) => this.compare(e.field, '==', v)).join(' OR ')})`;
    }
  }

  /** `has(payload_paths, ?)`, or the key's hot type column is not 0 (missing). */
  private has(pointer: string): string {
    const type = hotColumnOf(this.ctx.clickHouseHot, pointer, 't');
    return type ? `(${type} != 0)` : `has(payload_paths, ${this.p(pointer)})`;
  }

  /** The key's element of one of the flattened arrays, or its hot column (clickhouse-soql-hot.ts). */
  private element(pointer: string, array: 'payload_types' | 'payload_text' | 'payload_numbers'): string {
    const hot = hotColumnOf(this.ctx.clickHouseHot, pointer, array === 'payload_types' ? 't' : array === 'payload_text' ? 's' : 'n');
    return hot ?? `arrayElement(${array}, indexOf(payload_paths, ${this.p(pointer)}))`;
  }

  private exists(field: FieldRef): string {
    if (field.kind === 'payload') return this.has(jsonPointer(field.path));
    if (field.name === 'actor' || field.name === 'source') return `(${field.name} IS NOT NULL)`;
    return '1';
  }

  private compare(field: FieldRef, op: CompareOp, value: Value): string {
    if (field.kind === 'payload') return this.payload(jsonPointer(field.path), op, value);
    const col = field.name;
    const sqlOp = SQL_OPS[op];
    if (isTextField(col) && value.type === 'text') {
      if (op === ':' || op === '!:') {
        const like = this.like(col, likePattern(value.text, isWildcard(value.text, value.quoted)));
        return `ifNull(${op === ':' ? like : `NOT (${like})`}, 0)`;
      }
      return `ifNull(${this.textCompare(col, op, value.text)}, 0)`;
    }
    switch (value.type) {
      case 'text': {
        // dataset: names resolve to ids here (not_found for an unknown name, as on DuckDB).
        const ids = datasetIdsFor(this.ctx.datasetIds, op, value.text);
        if (ids.length === 0) return '0';
        const inList = `dataset_id IN (${ids.map((id) => this.p(id)).join(', ')})`;
        return op === '!:' || op === '!=' ? `(NOT ${inList})` : `(${inList})`;
      }
      case 'uuid':
        // event_id is stored as lower-case text, and the parser lower-cased the value.
        return `(event_id ${sqlOp} ${this.p(value.uuid)})`;
      case 'severity':
        return `(severity ${sqlOp} ${this.p(value.level)})`;
      case 'number':
        return `(bytes_raw ${sqlOp} ${this.double(value.value)})`;
      case 'time':
        // A whole number of epoch milliseconds within ±8.64e15: bound as integer digits.
        return `(${col} ${sqlOp} ${this.p(resolveTime(value.time, this.ctx.now))})`;
    }
  }

  /**
   * A payload comparison: one branch per JSON type the value can be compared with, each guarded
   * by the node's type code. The arrays are not Nullable, so no branch can be NULL.
   */
  private payload(pointer: string, op: CompareOp, value: Value): string {
    if (value.type !== 'text') return '0';
    if (op === '!=' || op === '!:') {
      // The presence test's parameter must be pushed before the ones of the positive test.
      const present = this.has(pointer);
      return `(${present} AND NOT ${this.payload(pointer, op === '!=' ? '==' : ':', value)})`;
    }
    const r = payloadReadings(value.text, value.quoted);
    const type = (): string => this.element(pointer, 'payload_types');
    const str = (): string => this.element(pointer, 'payload_text');
    const num = (): string => this.element(pointer, 'payload_numbers');
    const branches: string[] = [];
    if (op === ':') {
      const pattern = likePattern(value.text, isWildcard(value.text, value.quoted));
      branches.push(`(${type()} = ${payloadType.string} AND ${this.like(str(), pattern)})`);
    } else {
      branches.push(`(${type()} = ${payloadType.string} AND ${this.textCompare(str(), op, value.text)})`);
    }
    if (r.number !== null) {
      branches.push(`(${type()} = ${payloadType.number} AND ${num()} ${SQL_OPS[op]} ${this.double(r.number)})`);
    }
    if (op === ':' || op === '==') {
      if (r.boolean !== null) branches.push(`(${type()} = ${payloadType.boolean} AND ${str()} = ${this.p(String(r.boolean))})`);
      if (r.isNull) branches.push(`(${type()} = ${payloadType.null})`);
    }
    return branches.length === 1 ? branches[0]! : `(${branches.join(' OR ')})`;
  }
}
