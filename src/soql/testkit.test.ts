/**
 * Shared fixtures for the SOQL tests: fast-check arbitraries for queries and events (the
 * engines' SOQL tests load them into DuckDB with engine/duckdb/soql-testkit.test.ts). Named
 * *.test.ts so the build leaves it out.
 */
import fc from 'fast-check';
import type { MemoryEvent } from './predicate.js';
import {
  canonicalFields,
  compareOps,
  timeUnits,
  type CanonicalField,
  type CompareOp,
  type Expr,
  type FieldRef,
  type SoqlQuery,
  type TimeUnit,
  type Value,
} from './ast.js';

export const NOW = Date.UTC(2024, 4, 1, 12, 0, 0);
export const DATASET_IDS = new Map([
  ['game', 'ds_game'],
  ['auth', 'ds_auth'],
  ['matchmaking', 'ds_mm'],
]);
export const UUIDS = [
  '0b6d4f2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d',
  'f47ac10b-58cc-4372-a567-0e02b2c3d479',
  '123e4567-e89b-42d3-a456-426614174000',
];

/** Pieces the test strings are made of: they collide with query values on purpose and
 * exercise case folding (É, Σ/ς, İ, ß), code point order (U+FF00 vs 😀) and LIKE escaping. */
const PIECES = ['eu', 'EU', 'west', '-', '1', 'srv', 'bot', 'player.join', 'É', 'é', 'Σ', 'ς', 'ΑΣ', 'İ', 'i', '😀',
  '\uff00', '%', '_', '\\', '*', "'", ' ', 'ß', 'x', 'a', 'A', '150', '20', '"', '\u0000', 'true', 'null'];
export const textArb = fc.array(fc.constantFrom(...PIECES), { maxLength: 4 }).map((a) => a.join(''));
const KEYS = ['a', 'b', 'ping', 'n', 's', 'arr', '0', '1', 'x y', 'we`ird', 'payload', 'org_id', '~/k', 'A'];

const scalarArb = fc.oneof(
  { arbitrary: textArb, weight: 4 },
  { arbitrary: fc.integer({ min: -200, max: 200 }), weight: 4 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 4 },
  { arbitrary: fc.constantFrom(150, 20, 1.5, -3, 1e21, 2 ** 63, -(2 ** 63), 2 ** 64, 0), weight: 4 },
  { arbitrary: fc.boolean(), weight: 4 },
  { arbitrary: fc.constant(null), weight: 4 },
  // Rarely, an unpaired surrogate: stored as `\ud800`, which makes the whole payload
  // unreadable to DuckDB (both back ends then read it as empty; predicate.ts).
  { arbitrary: fc.constantFrom('\ud800', 'x\udc00'), weight: 1 },
);
const jsonArb = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarArb,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 3 }),
  ),
})).value;

export const eventArb = (seq: number): fc.Arbitrary<MemoryEvent> =>
  fc.record({
    seq: fc.constant(seq),
    event_id: fc.oneof(fc.constantFrom(...UUIDS), fc.uuid()),
    ts: fc.integer({ min: NOW - 3 * 3_600_000, max: NOW + 600_000 }),
    ingested_at: fc.integer({ min: NOW - 3 * 3_600_000, max: NOW + 600_000 }),
    dataset: fc.constantFrom(...DATASET_IDS.keys()),
    severity: fc.integer({ min: 0, max: 4 }),
    event: textArb,
    actor: fc.option(textArb, { nil: null }),
    source: fc.option(textArb, { nil: null }),
    message: textArb,
    // Through JSON and back, so both back ends see exactly the same payload.
    payload: fc.dictionary(fc.constantFrom(...KEYS), jsonArb, { maxKeys: 4 }).map(
      (p) => JSON.parse(JSON.stringify(p)) as Record<string, unknown>,
    ),
    bytes_raw: fc.integer({ min: 0, max: 2000 }),
  });

export const eventsArb = (max: number): fc.Arbitrary<MemoryEvent[]> =>
  fc.integer({ min: 0, max }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => eventArb(i + 1))));

const BARE_VALUE = /^[^\s()",]+$/u;

/** How wide the generated values are: `narrow` for agreement runs (values that can hit the
 * events above, datasets that exist), `wide` for print/parse round trips (any text). */
export interface QueryShape {
  text: fc.Arbitrary<string>;
  key: fc.Arbitrary<string>;
  datasetName: fc.Arbitrary<string>;
}
const NUMBER_TEXTS = ['0', '-0', '20', '150', '1.5', '-3', '1e2', '1e21', '18446744073709551615', '999.5', '1000'];
export const narrow: QueryShape = {
  text: fc.oneof(textArb, fc.constantFrom(...NUMBER_TEXTS, 'true', 'false', 'null', 'e*', '*a*', '*', 'eu*', '*1')),
  key: fc.constantFrom(...KEYS),
  datasetName: fc.constantFrom(...DATASET_IDS.keys()),
};
export const wide: QueryShape = {
  text: fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), narrow.text),
  key: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }), narrow.key),
  datasetName: fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
};

const textValue = (shape: QueryShape, allowWildcard: boolean): fc.Arbitrary<Value> =>
  fc.tuple(shape.text, fc.boolean()).map(([text, quoted]): Value => {
    const bareOk = BARE_VALUE.test(text) && (allowWildcard || !text.includes('*'));
    return { type: 'text', text, quoted: quoted || !bareOk };
  });

const timeValue: fc.Arbitrary<Value> = fc.oneof(
  fc.integer({ min: NOW - 4 * 3_600_000, max: NOW + 3_600_000 }).map((ms): Value => ({ type: 'time', time: { kind: 'absolute', ms } })),
  fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }).map((ms): Value => ({ type: 'time', time: { kind: 'absolute', ms } })),
  fc.tuple(fc.integer({ min: 0, max: 300 }), fc.constantFrom(...(Object.keys(timeUnits) as TimeUnit[]))).map(
    ([amount, unit]): Value => ({ type: 'time', time: { kind: 'relative', amount, unit: amount === 0 ? 's' : unit } }),
  ),
);

export function valueArb(shape: QueryShape, field: FieldRef, op: CompareOp): fc.Arbitrary<Value> {
  if (field.kind === 'payload') return textValue(shape, true);
  switch (field.name) {
    case 'severity':
      return fc.integer({ min: 0, max: 4 }).map((level): Value => ({ type: 'severity', level }));
    case 'ts':
    case 'ingested_at':
      return timeValue;
    case 'bytes_raw':
      return fc.oneof(fc.constantFrom(...NUMBER_TEXTS), fc.stringMatching(/^-?\d{1,5}(\.\d{1,3})?([eE][+-]?\d{1,2})?$/)).map(
        (text): Value => ({ type: 'number', value: Number(text), text }),
      );
    case 'event_id':
      return fc.oneof(fc.constantFrom(...UUIDS), fc.uuid()).map((u): Value => ({ type: 'uuid', uuid: u.toLowerCase() }));
    case 'dataset':
      if (['>', '>=', '<', '<='].includes(op)) return textValue(shape, true);
      return fc.tuple(shape.datasetName, fc.boolean()).map(([name, upper]): Value => {
        const text = op === ':' || op === '!:' ? (upper ? name.toUpperCase() : name) : name;
        return { type: 'text', text, quoted: !BARE_VALUE.test(text) || text.includes('*') };
      });
    default:
      return textValue(shape, true);
  }
}

export const fieldArb = (shape: QueryShape): fc.Arbitrary<FieldRef> =>
  fc.oneof(
    fc.constantFrom(...canonicalFields).map((name: CanonicalField): FieldRef => ({ kind: 'canonical', name })),
    fc.array(shape.key, { minLength: 1, maxLength: 2 }).map((path): FieldRef => ({ kind: 'payload', path })),
  );

const leafArb = (shape: QueryShape): fc.Arbitrary<Expr> =>
  fieldArb(shape).chain((field): fc.Arbitrary<Expr> => {
    const isId = field.kind === 'canonical' && field.name === 'event_id';
    const ops = isId ? compareOps.filter((o) => !['>', '>=', '<', '<='].includes(o)) : [...compareOps];
    return fc.oneof(
      { arbitrary: fc.constantFrom(...ops).chain((op) => valueArb(shape, field, op).map((value): Expr => ({ type: 'compare', field, op, value, position: 0 }))), weight: 6 },
      { arbitrary: fc.array(valueArb(shape, field, '=='), { minLength: 1, maxLength: 4 }).map((values): Expr => ({ type: 'in', field, values, position: 0 })), weight: 1 },
      { arbitrary: fc.constant<Expr>({ type: 'exists', field, position: 0 }), weight: 1 },
      { arbitrary: shape.text.map((text): Expr => ({ type: 'freetext', text, position: 0 })), weight: 1 },
    );
  });

export function exprArb(shape: QueryShape, depth: number): fc.Arbitrary<Expr> {
  if (depth <= 0) return leafArb(shape);
  const child = exprArb(shape, depth - 1);
  return fc.oneof(
    { arbitrary: leafArb(shape), weight: 3 },
    { arbitrary: fc.array(child, { minLength: 2, maxLength: 3 }).map((items): Expr => ({ type: 'and', items, position: 0 })), weight: 1 },
    { arbitrary: fc.array(child, { minLength: 2, maxLength: 3 }).map((items): Expr => ({ type: 'or', items, position: 0 })), weight: 1 },
    { arbitrary: child.map((expr): Expr => ({ type: 'not', expr, position: 0 })), weight: 1 },
  );
}

export const queryArb = (shape: QueryShape, depth = 3): fc.Arbitrary<SoqlQuery> =>
  fc.record({ filter: fc.option(exprArb(shape, depth), { nil: null, freq: 8 }), groupBy: fc.option(fieldArb(shape), { nil: null }) });
