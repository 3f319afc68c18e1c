/**
 * The typed syntax tree of a SOQL query (SOQL.md). The parser checks every value against its
 * field, so the compilers never re-validate: a `severity` value is already an index, a `ts` value
 * already a time, and so on. Relative times stay symbolic (`now-15m`) so one parsed query can be
 * evaluated against any clock (live tail re-resolves them per batch).
 */

export const canonicalFields = [
  'ts',
  'ingested_at',
  'dataset',
  'severity',
  'event',
  'actor',
  'source',
  'message',
  'event_id',
  'bytes_raw',
] as const;
export type CanonicalField = (typeof canonicalFields)[number];

/** Canonical fields holding free text: `:` means contains / wildcard there. */
export const textFields = ['event', 'actor', 'source', 'message'] as const;
export type TextField = (typeof textFields)[number];

/** Fields taken from the caller's token; naming them in a query is soql_reserved_field. */
export const reservedFields = ['org_id', 'project_id'] as const;

export type FieldRef =
  | { kind: 'canonical'; name: CanonicalField }
  /** Keys from the payload root downwards: `payload.a.b` and a bare `a.b` are both ['a', 'b']. */
  | { kind: 'payload'; path: string[] };

export const compareOps = [':', '!:', '==', '!=', '>', '>=', '<', '<='] as const;
export type CompareOp = (typeof compareOps)[number];

export const timeUnits = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
export type TimeUnit = keyof typeof timeUnits;

export type TimeValue =
  | { kind: 'absolute'; ms: number }
  /** `now` is amount 0 (unit normalised to 's'); `-15m` and `now-15m` are both amount 15, unit 'm'. */
  | { kind: 'relative'; amount: number; unit: TimeUnit };

/**
 * A value, already typed by the field it is compared with:
 * - text: text fields, dataset and payload keys. `quoted` matters: only a bare word can be a
 *   wildcard (`eu*`), and only a bare word can be read as a number, `true`, `false` or `null`
 *   when the stored payload value is of that type.
 * - severity: index into `severities` (debug = 0 … fatal = 4).
 * - number: bytes_raw; `text` keeps the spelling so printing round-trips.
 * - uuid: event_id, lower-cased.
 */
export type Value =
  | { type: 'text'; text: string; quoted: boolean }
  | { type: 'severity'; level: number }
  | { type: 'time'; time: TimeValue }
  | { type: 'number'; value: number; text: string }
  | { type: 'uuid'; uuid: string };

/** Every node carries `position`: 0-based offset in q (UTF-16 code units) where it starts. */
export type Expr =
  | { type: 'and'; items: Expr[]; position: number }
  | { type: 'or'; items: Expr[]; position: number }
  | { type: 'not'; expr: Expr; position: number }
  | { type: 'compare'; field: FieldRef; op: CompareOp; value: Value; position: number }
  /** `f in (a, b)` means `f == a OR f == b`. */
  | { type: 'in'; field: FieldRef; values: Value[]; position: number }
  | { type: 'exists'; field: FieldRef; position: number }
  /** A lone quoted string: the message contains it, case-insensitively. */
  | { type: 'freetext'; text: string; position: number };

/** SOQL.md "Statistics": the aggregate functions of `stats`. */
export const statsFunctions = ['count', 'count_distinct', 'sum', 'avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'] as const;
export type StatsFunction = (typeof statsFunctions)[number];

/** The functions over a field's numbers (payload numbers, bytes_raw); percentiles among them. */
export type NumericStatsFunction = Exclude<StatsFunction, 'count' | 'count_distinct'>;

export type StatsAggregate =
  | { fn: 'count'; position: number }
  | { fn: 'count_distinct'; field: FieldRef; position: number }
  | { fn: NumericStatsFunction; field: FieldRef; position: number }
  /**
   * Not SOQL (the parser never makes it): how many of the field's values are numbers, the ones
   * `sum` and `avg` are taken over. The monitors keep a long window's sums with it
   * (monitors/window-counts.ts) and tell a group with no number (null) from a sum of 0.
   */
  | { fn: 'count_numbers'; field: FieldRef; position: number };

/** Bin units: SOQL.md's `<n><unit>`, unit s m h d. */
export const binUnits = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export type BinUnit = keyof typeof binUnits;

export type StatsByItem =
  | { kind: 'field'; field: FieldRef; position: number }
  /** Bins of ts, `amount` units wide, aligned to the Unix epoch (UTC). */
  | { kind: 'bin'; amount: number; unit: BinUnit; position: number };

export interface StatsClause {
  aggregates: StatsAggregate[];
  by: StatsByItem[];
  position: number;
}

export interface SoqlQuery {
  /** null: the empty query, which matches every event. */
  filter: Expr | null;
  groupBy: FieldRef | null;
  /** `stats …` (SOQL.md "Statistics"); absent or null without one. Never with groupBy. */
  stats?: StatsClause | null;
}

export const isCanonicalField = (name: string): name is CanonicalField =>
  (canonicalFields as readonly string[]).includes(name);

export const isTextField = (name: CanonicalField): name is TextField =>
  (textFields as readonly string[]).includes(name);

/** A copy of the query with every position set to 0, to compare trees (print/parse round trip). */
export function withoutPositions(query: SoqlQuery): SoqlQuery {
  const strip = (e: Expr): Expr => {
    switch (e.type) {
      case 'and':
      case 'or':
        return { ...e, items: e.items.map(strip), position: 0 };
      case 'not':
        return { ...e, expr: strip(e.expr), position: 0 };
      default:
        return { ...e, position: 0 };
    }
  };
  const stats = query.stats
    ? {
        aggregates: query.stats.aggregates.map((a) => ({ ...a, position: 0 })),
        by: query.stats.by.map((b) => ({ ...b, position: 0 })),
        position: 0,
      }
    : null;
  return { filter: query.filter ? strip(query.filter) : null, groupBy: query.groupBy, ...(stats ? { stats } : {}) };
}

/** The payload paths a query reads: in its filter, `group by`, `stats` functions and `by` fields (each once). */
export function payloadPaths(query: SoqlQuery): string[][] {
  const found = new Map<string, string[]>();
  const add = (field: FieldRef) => {
    if (field.kind === 'payload') found.set(JSON.stringify(field.path), field.path);
  };
  const visit = (e: Expr): void => {
    if (e.type === 'and' || e.type === 'or') e.items.forEach(visit);
    else if (e.type === 'not') visit(e.expr);
    else if (e.type !== 'freetext') add(e.field);
  };
  if (query.filter) visit(query.filter);
  if (query.groupBy) add(query.groupBy);
  for (const b of query.stats?.by ?? []) if (b.kind === 'field') add(b.field);
  for (const a of query.stats?.aggregates ?? []) if (a.fn !== 'count') add(a.field);
  return [...found.values()];
}

/**
 * Whether the query names a relative time (`now`, `now-15m`, `-1h`): only then does its answer
 * depend on when it runs. A query without one pages the same with any `now` (POST /query's
 * cursor then leaves it out, and an unchanged answer may be served again: query/kept-answers.ts).
 */
export function readsClock(query: SoqlQuery): boolean {
  const relative = (v: Value) => v.type === 'time' && v.time.kind === 'relative';
  const visit = (e: Expr): boolean => {
    switch (e.type) {
      case 'and':
      case 'or':
        return e.items.some(visit);
      case 'not':
        return visit(e.expr);
      case 'compare':
        return relative(e.value);
      case 'in':
        return e.values.some(relative);
      default:
        return false;
    }
  };
  return query.filter !== null && visit(query.filter);
}
