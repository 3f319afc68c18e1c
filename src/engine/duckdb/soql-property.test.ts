/** Property tests: print/parse round trips, and no input can make the parser misbehave. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../errors/app-error.js';
import type { MemoryEvent } from '../../soql/predicate.js';
import { compilePredicate, parseSoql, printSoql, withoutPositions, type SoqlQuery } from '../../soql/index.js';
import { compileDuckDbFilter } from '../soql-compile.js';
import { DATASET_IDS, NOW, queryArb, wide } from '../../soql/testkit.test.js';

const SQL_ALPHABET = /^[A-Za-z0-9_ (),?=<>'\\]*$/;

/** Parses q; returns the query, or null after checking the error is a SOQL AppError. */
function tryParse(q: string): SoqlQuery | null {
  try {
    return parseSoql(q);
  } catch (err) {
    assert.ok(err instanceof AppError, `${String(err)} for ${JSON.stringify(q)}`);
    assert.match(err.code, /^soql_(parse_error|reserved_field)$/);
    const { position, near, field } = err.extra as { position: number; near: string; field: string };
    assert.ok(Number.isInteger(position) && position >= 0 && position <= q.length, `position ${position}`);
    assert.equal(near, q.slice(position, position + near.length));
    assert.ok(near.length <= 20 && (near.length > 0 || position >= q.length - 1 || position === 4096), `near ${JSON.stringify(near)}`);
    assert.equal(typeof field, 'string');
    return null;
  }
}

/**
 * Guards against super-linear parsing (a backtracking regex, quadratic rescans), which takes
 * seconds to minutes on these inputs; the bound is far above a normal run (~1 ms) so that a GC
 * pause or a machine loaded by other test files (CI saw 264 ms for an instant refusal) does not fail it.
 */
const timed = <T>(label: string, f: () => T, budgetMs = 2_000): T => {
  const start = performance.now();
  const out = f();
  const took = performance.now() - start;
  assert.ok(took < budgetMs, `${label} took ${took.toFixed(1)} ms`);
  return out;
};

test('printing a random query and parsing it back gives the same tree', () => {
  fc.assert(
    fc.property(queryArb(wide, 4), (query) => {
      const text = printSoql(query);
      fc.pre(text.length <= 4096);
      assert.deepEqual(withoutPositions(parseSoql(text)), withoutPositions(query), text);
    }),
    { numRuns: 2000 },
  );
});

test('compiled SQL never contains query text (random queries)', () => {
  fc.assert(
    fc.property(queryArb(wide, 3), (query) => {
      try {
        const { where, params } = compileDuckDbFilter(query, { now: NOW, datasetIds: DATASET_IDS });
        assert.match(where, SQL_ALPHABET);
        assert.equal(where.split('?').length - 1, params.length);
      } catch (err) {
        // a dataset name the map lacks is the only allowed failure
        assert.ok(err instanceof AppError && err.code === 'not_found', String(err));
      }
    }),
    { numRuns: 1000 },
  );
});

const SOUP = ['(', ')', ' ', ' AND ', ' OR ', 'NOT ', '"', '\\', '`', '``', 'a', 'payload.', '.', ':', '!:', '==', '!=', '>=', '<',
  '=', ' in ', ' exists', ',', ' group by ', 'severity', 'ts', 'dataset', 'event_id', 'bytes_raw', 'now-5m', '2024-05-01T00:00:00Z',
  '*', 'org_id', 'warn', '150', '-1h', 'é', '😀', '\u0000', '\n', 'game', 'true', 'null'];

const strings = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.array(fc.constantFrom(...SOUP), { maxLength: 30 }).map((parts) => parts.join('')),
);

const sampleEvent: MemoryEvent = {
  seq: 1, event_id: '0b6d4f2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d', ts: NOW, ingested_at: NOW, dataset: 'game', severity: 2,
  event: 'match.start', actor: null, source: 'eu-west-1', message: 'connection lost', payload: { a: 1, b: 'x' }, bytes_raw: 10,
};

test('random text only ever fails with soql_* AppErrors, quickly; what parses round-trips and compiles', () => {
  fc.assert(
    fc.property(strings, (q) => {
      // A guard against runaway (exponential) parsing, not a speed test: the budget must survive a
      // GC pause on a loaded CI machine (a 5-character string once took 74 ms there).
      const query = timed(JSON.stringify(q), () => tryParse(q), 500);
      if (!query) return;
      assert.deepEqual(withoutPositions(parseSoql(printSoql(query))), withoutPositions(query), q);
      compilePredicate(query, { now: NOW })(sampleEvent);
      try {
        assert.match(compileDuckDbFilter(query, { now: NOW, datasetIds: DATASET_IDS }).where, SQL_ALPHABET);
      } catch (err) {
        assert.ok(err instanceof AppError && err.code === 'not_found', String(err));
      }
    }),
    { numRuns: 5000 },
  );
});

test('pathological inputs at the limits finish quickly', () => {
  const fill = (unit: string, length = 4096): string => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
  const cases: [string, boolean][] = [
    [fill('a:b AND '), false], // ends mid-predicate
    ['message:' + fill('x', 4088), true],
    [fill('('), false],
    [fill(')'), false],
    [fill('NOT '), false],
    ['"' + fill('x', 4094), false], // unclosed string
    ['"' + fill('\\"', 4094), false],
    ['`' + fill('``', 4094), false],
    ['payload.' + fill('a.', 4080) + 'b exists', true],
    [`a in (${fill('1,', 4088)}`, false],
    ['a:b' + ' OR a:b'.repeat(584), true],
    ['message:' + fill('*a', 4088), true],
    ['('.repeat(32) + 'a:b' + ')'.repeat(32), true],
    ['('.repeat(33) + 'a:b' + ')'.repeat(33), false],
    ['NOT '.repeat(33) + 'a:b', false],
    ['a:b' + ' AND a:b'.repeat(511), true],
    [fill(' '), true],
    [fill('é😀'), false],
  ];
  for (const [q, ok] of cases) {
    assert.ok(q.length <= 4096, String(q.length));
    const query = timed(`${q.slice(0, 30)}… (${q.length})`, () => tryParse(q));
    assert.equal(query !== null, ok, `${q.slice(0, 40)}… parsed: ${query !== null}`);
  }
  timed('4,097 characters', () => assert.equal(tryParse('a'.repeat(4097)), null));
  // The wildcard matcher is linear-ish: a 2,000-star pattern over a long message stays fast.
  const pattern = parseSoql('message:' + fill('*a', 4000) + '*b');
  const match = compilePredicate(pattern, { now: NOW });
  timed('wildcard over 100k chars', () => assert.equal(match({ ...sampleEvent, message: 'a'.repeat(100_000) }), false));
});
