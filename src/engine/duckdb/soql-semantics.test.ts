/** SOQL.md "Meaning", case by case, checked on both back ends at once. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '../../errors/app-error.js';
import type { MemoryEvent } from '../../soql/predicate.js';
import { assertDatasetsExist, compilePredicate, parseSoql, rejectAggregationForTail } from '../../soql/index.js';
import { compileDuckDbFilter } from '../soql-compile.js';
import { compareCodePoints, foldCase, wildcardMatch } from '../../soql/text.js';
import { DATASET_IDS, NOW } from '../../soql/testkit.test.js';
import { loadEvents, openEventsDb, selectSeqs } from './soql-testkit.test.js';

const base: MemoryEvent = {
  seq: 0, event_id: '0b6d4f2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d', ts: NOW, ingested_at: NOW, dataset: 'game', severity: 1,
  event: 'e', actor: null, source: null, message: '', payload: {}, bytes_raw: 1,
};
const EVENTS: MemoryEvent[] = [
  { ...base, seq: 1, actor: 'Bot-1', source: 'EU-West-1', message: 'ΟΔΟΣ closed', payload: { n: 150, s: '150', b: true, z: null } },
  { ...base, seq: 2, actor: '', source: 'srv_%1', message: 'İstanbul', payload: { n: 20, s: '20', b: false, o: { k: 'v' }, arr: [10, 'x'] } },
  { ...base, seq: 3, dataset: 'auth', severity: 4, message: 'a\\b', payload: { n: 1e21, s: 'Straße', 'a.b': 1, nested: { a: { b: 'deep' } } } },
  { ...base, seq: 4, dataset: 'matchmaking', ts: NOW - 3_600_000, payload: { s: '\uff00', t: '😀' }, bytes_raw: 1500 },
];

let con: DuckDBConnection;
before(async () => {
  con = await openEventsDb();
  await loadEvents(con, EVENTS);
});
after(() => con.closeSync());

/** Both back ends must select exactly `seqs`. */
async function selects(q: string, seqs: number[], now = NOW): Promise<void> {
  const query = parseSoql(q);
  assert.deepEqual(EVENTS.filter(compilePredicate(query, { now })).map((e) => e.seq), seqs, `${q} (in memory)`);
  const { where, params } = compileDuckDbFilter(query, { now, datasetIds: DATASET_IDS });
  assert.deepEqual(await selectSeqs(con, where, params), seqs, `${q} (DuckDB)`);
}

test('a missing field matches no comparison, != and !: included; NOT still negates', async () => {
  await selects('actor:bot', [1]);
  await selects('actor != x', [1, 2]);
  await selects('actor !: x', [1, 2]);
  await selects('NOT actor:bot', [2, 3, 4]);
  await selects('actor exists', [1, 2]);
  await selects('NOT source exists', [3, 4]);
  await selects('payload.n != 150', [2, 3]);
  await selects('payload.missing !: x', []);
});

test(': is a case-insensitive contains, or a wildcard over the whole field', async () => {
  await selects('source:eu-west', [1]);
  await selects('source:eu*', [1]);
  await selects('source:west*', []);
  await selects('source:*WEST*', [1]);
  await selects('source:"eu*"', []); // quoted: the star is literal
  await selects('source:%', [2]); // LIKE characters are literal
  await selects('source:_', [2]);
  await selects('message:"\\\\"', [3]);
  await selects('message:"οδοσ"', [1]); // each code point folds alone: a final Σ becomes σ…
  await selects('message:"οδος"', []); // …not ς, in SQL and here alike
  await selects('message:istanbul', [2]); // İ folds to i, as DuckDB does
  await selects('payload.s:strasse', []); // no full case folding: ß stays ß
  await selects('payload.s:STRAßE', [3]);
});

test('== is exact and case-sensitive; ordering is by code point', async () => {
  await selects('source == eu-west-1', []);
  await selects('source == EU-West-1', [1]);
  await selects('actor == ""', [2]);
  await selects('payload.s > "\uff00"', []);
  await selects('payload.t > "\uff00"', [4]); // U+1F600 sorts after U+FF00 in code point order
  assert.ok(compareCodePoints('😀', '\uff00') > 0 && '😀' < '\uff00');
});

test('payload numbers compare numerically, strings as text, other types only by equality', async () => {
  await selects('payload.n > 100', [1, 3]);
  await selects('payload.n == 1e21', [3]);
  await selects('payload.n:150', [1]);
  await selects('payload.n > "100"', []); // quoted: text, and numbers are not text
  await selects('payload.s > 100', [1, 2, 3, 4]); // "150", "20", "Straße", "＀" vs "100" as text
  await selects('payload.s == 150', [1]);
  await selects('payload.b == true', [1]);
  await selects('payload.b:false', [2]);
  await selects('payload.b == "true"', []);
  await selects('payload.b > false', []);
  await selects('payload.z == null', [1]);
  await selects('payload.z exists', [1]);
  await selects('payload.o exists AND payload.o != x', [2]);
  await selects('payload.o.k == v', [2]);
  await selects('payload.arr.0 == 10', [2]);
  await selects('payload.arr.1:X', [2]);
  await selects('payload.arr.01 exists', []);
  await selects('payload.`a.b` == 1', [3]);
  await selects('payload.a.b exists', []);
  await selects('payload.nested.a.b:DEE*', [3]);
});

test('canonical fields: severity order, times, numbers, UUIDs, datasets', async () => {
  await selects('severity > info', [3]);
  await selects('severity:INFO', [1, 2, 4]);
  await selects('severity in (debug, fatal)', [3]);
  await selects('ts < now-30m', [4]);
  await selects('ts < now-30m', [], NOW - 3_600_000); // relative times follow the clock given
  await selects(`ts >= ${new Date(NOW).toISOString()}`, [1, 2, 3]);
  await selects('bytes_raw >= 1.5e3', [4]);
  await selects('bytes_raw:1', [1, 2, 3]);
  await selects('event_id:0B6D4F2A-1C3E-4A5B-8C7D-9E0F1A2B3C4D', [1, 2, 3, 4]);
  await selects('event_id != 0b6d4f2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d', []);
  await selects('dataset:AUTH', [3]);
  await selects('dataset != game', [3, 4]);
  await selects('dataset > game', [4]);
  await selects('dataset in (auth, matchmaking)', [3, 4]);
  await selects('"closed"', [1]);
  await selects('', [1, 2, 3, 4]);
});

test('unknown datasets are not_found on both paths; tail rejects group by', () => {
  const isNotFound = (e: unknown): boolean => e instanceof AppError && e.code === 'not_found' && e.message === 'dataset "nope" does not exist';
  for (const q of ['dataset:nope', 'dataset == nope', 'NOT dataset != nope', 'dataset in (game, nope)', 'dataset == Game OR dataset:nope']) {
    assert.throws(() => compileDuckDbFilter(parseSoql(q), { now: NOW, datasetIds: DATASET_IDS }), (e) => isNotFound(e) || q.includes('Game'));
    assert.throws(() => assertDatasetsExist(parseSoql(q), DATASET_IDS), (e) => isNotFound(e) || q.includes('Game'));
  }
  assert.doesNotThrow(() => assertDatasetsExist(parseSoql('dataset > nope AND dataset:GAME'), DATASET_IDS));
  assert.throws(() => rejectAggregationForTail(parseSoql('severity >= warn group by source')), (e: unknown) => {
    assert.ok(e instanceof AppError && e.code === 'soql_tail_aggregation_unsupported' && e.status === 400);
    return true;
  });
  assert.doesNotThrow(() => rejectAggregationForTail(parseSoql('severity >= warn')));
});

test('text helpers', () => {
  assert.equal(foldCase('ΟΔΟΣ'), 'οδοσ');
  assert.equal(foldCase('İx'), 'ix');
  assert.equal(foldCase('ABC'), 'abc');
  assert.ok(wildcardMatch('abcabd', 'a*b*d'));
  assert.ok(wildcardMatch('', '*'));
  assert.ok(!wildcardMatch('ab', 'a*b*c'));
  assert.ok(!wildcardMatch('aba', 'ab*ba')); // pieces may not overlap
  assert.ok(compareCodePoints('a', 'ab') < 0 && compareCodePoints('b', 'a') > 0 && compareCodePoints('x', 'x') === 0);
});
