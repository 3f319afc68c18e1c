/**
 * An escaped unpaired surrogate (`\ud800`) in payload JSON text: JSON.parse accepts it, and
 * JSON.stringify writes a lone surrogate that way, but DuckDB's JSON reader refuses the whole
 * text. Such a payload reads as empty on both engines (the DuckDB SQL wraps each JSON function
 * in TRY; ClickHouse's flattened paths are left empty), and the in-memory predicate of live tail
 * and monitors treats it the same, so every path selects the same events. A rule of the
 * language (SOQL.md "Meaning"), so it lives here and the engines import it.
 */
const UNREADABLE_BY_DUCKDB = /(?:^|[^\\])(?:\\\\)*\\u[dD][89a-fA-F]/;
export const duckDbCannotRead = (payloadJson: string): boolean => UNREADABLE_BY_DUCKDB.test(payloadJson);
