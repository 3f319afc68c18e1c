/**
 * The one way a value enters ClickHouse SQL. ClickHouse 18.16 (the server Debian ships) has no
 * server-side query parameters, so statements carry their values as literals; every statement
 * the ClickHouse engine sends is built from constant SQL with `?` placeholders (SOQL's
 * ClickHouse dialect, the engine's own statements) and bound here. literal.test.ts proves with
 * fast-check that no string can leave its literal, against this function and the real server.
 */

export type SqlValue = string | number | boolean | null | bigint;

/** The little-endian IEEE 754 bytes of a finite number as 16 hex digits (exact on every server). */
export function float64Hex(n: number): string {
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleLE(n, 0);
  return bytes.toString('hex').toUpperCase();
}

/** Backslash escapes ClickHouse reads inside '…' (every other byte, newlines included, is literal). */
const escapes: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\0': '\\0', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** A ClickHouse string literal holding exactly `s` (UTF-8; lone surrogates become U+FFFD). */
export function stringLiteral(s: string): string {
  return `'${s.replace(/[\\'\0\n\r\t\b\f]/g, (c) => escapes[c]!)}'`;
}

/**
 * A literal for a value: strings quoted and escaped; safe integers as digits; other finite
 * numbers through toFloat64 of their shortest exact text; booleans as 1 and 0 (18.16 has no
 * boolean type); null as NULL. NaN and infinities are refused (SOQL never produces them).
 */
export function literal(value: SqlValue): string {
  if (value === null) return 'NULL';
  switch (typeof value) {
    case 'string':
      return stringLiteral(value);
    case 'boolean':
      return value ? '1' : '0';
    case 'bigint':
      return value.toString();
    case 'number':
      if (Number.isSafeInteger(value)) return String(value);
      if (!Number.isFinite(value)) throw new Error(`a ClickHouse literal cannot hold ${value}`);
      // 18.16 reads float text up to one ulp off (and subnormals as 0): its IEEE 754 bytes are exact.
      return `reinterpretAsFloat64(unhex('${float64Hex(value)}'))`;
  }
}

/**
 * Replaces each `?` of `sql` with the literal of the next value. The SQL must come from
 * constants (a `?` never appears inside its own string literals), and the count must match:
 * a mismatch is a programming error and throws rather than sending a wrong statement.
 */
export function bindParams(sql: string, params: readonly SqlValue[]): string {
  const parts = sql.split('?');
  if (parts.length - 1 !== params.length) {
    throw new Error(`the statement has ${parts.length - 1} placeholders but ${params.length} values`);
  }
  // Two literals side by side ('a''b') read as one in ClickHouse: a template that could do that is refused.
  if (/\?\?|'\?|\?'/.test(sql)) throw new Error('a placeholder touches another placeholder or a quote in the statement');
  let out = parts[0]!;
  for (let i = 0; i < params.length; i++) out += literal(params[i]!) + parts[i + 1]!;
  return out;
}
