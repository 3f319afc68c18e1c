/**
 * The two back ends must select the same events: the in-memory predicate (live tail) and the
 * DuckDB SQL (POST /query), run here against a real in-memory DuckDB laid out by the event
 * store's DDL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { DuckDBConnection } from '@duckdb/node-api';
import { duckDbCannotRead, lookupPayload, type MemoryEvent } from '../../soql/predicate.js';
import { compilePredicate, parseSoql, printSoql, type FieldRef } from '../../soql/index.js';
import { compileDuckDbFilter, compileDuckDbGroupKey, decodeGroupValue } from '../soql-compile.js';
import { DATASET_IDS, NOW, eventsArb, narrow, queryArb } from '../../soql/testkit.test.js';
import { loadEvents, openEventsDb, selectGroups, selectSeqs } from './soql-testkit.test.js';

/** The SQL text may hold only our own constants: a spliced value would bring other characters. */
const SQL_ALPHABET = /^[A-Za-z0-9_ (),?=<>'\\]*$/;

let con: DuckDBConnection;
before(async () => {
  con = await openEventsDb();
});
after(() => {
  con.closeSync();
});

const min = 60_000;
const ev = (seq: number, e: Partial<MemoryEvent>): MemoryEvent => ({
  seq,
  event_id: `00000000-0000-4000-8000-00000000000${seq}`,
  ts: NOW,
  ingested_at: NOW,
  dataset: 'game',
  severity: 1,
  event: 'e',
  actor: null,
  source: null,
  message: '',
  payload: {},
  bytes_raw: 100,
  ...e,
});

/** A fixed data set on which every example of SOQL.md has a known answer. */
const FIXED: MemoryEvent[] = [
  ev(1, { severity: 2, event: 'match.start', source: 'eu-west-1', actor: 'alice', message: 'connection lost to server', payload: { region: 'eu-central', ping: 200, map: 'dust' }, ts: NOW - 5 * min }),
  ev(2, { dataset: 'matchmaking', event: 'match.start', source: 'srv-eu-1', actor: 'bot-7', message: 'Connection LOST', payload: { region: 'EU-west', ping: 100, map: 'nuke' }, ts: NOW - 20 * min }),
  ev(3, { dataset: 'matchmaking', severity: 3, event: 'match.start', source: 'us-east-1', message: 'ok', payload: { region: 'us-east', ping: '300', map: 'dust' }, ts: NOW - min }),
  ev(4, { severity: 4, event: 'player.join', source: 'eu-west-1', actor: 'bot-1', message: 'x', payload: { ping: 151 }, ts: NOW - 10 * min }),
  ev(5, { dataset: 'auth', severity: 0, event: 'player.leave', actor: 'carol', message: 'connection lost', ts: NOW - 120 * min }),
  ev(6, { dataset: 'auth', severity: 3, event: 'player.leave', source: 'srv-2', actor: 'dave', message: 'user connection lost again', payload: { map: 'inferno', ping: 150 }, ts: NOW - 14 * min }),
  ev(7, { dataset: 'matchmaking', severity: 2, event: 'match.start.v2', source: 'EU-WEST-1a', actor: 'Bot-9', message: 'Connection lost', payload: { region: 'eu' } }),
  ev(8, { severity: 3, event: 'player.joined', source: 'srv-9', actor: 'erin', message: 'connection lost', payload: { ping: 500, map: 'dust' }, ts: NOW - 16 * min }),
];

const EXAMPLES: { q: string; seqs: number[]; groups?: [string | null, number][] }[] = [
  { q: 'severity >= warn', seqs: [1, 3, 4, 6, 7, 8] },
  { q: 'source:eu-west-1 AND severity >= error', seqs: [4] },
  { q: 'dataset:matchmaking AND event == "match.start" AND payload.region:eu*', seqs: [2] },
  // seq 3's ping is the string "300": strings compare as text, and "300" > "150".
  { q: 'payload.ping > 150 AND ts >= now-15m', seqs: [1, 3, 4] },
  { q: '(event:player.join OR event:player.leave) AND NOT actor:bot-*', seqs: [5, 6, 8] },
  { q: '"connection lost" AND source:srv-*', seqs: [2, 6, 8] },
  { q: 'dataset in (game, auth) AND severity >= warn group by source', seqs: [1, 4, 6, 8], groups: [['eu-west-1', 2], ['srv-2', 1], ['srv-9', 1]] },
  { q: 'severity >= error group by payload.map', seqs: [3, 4, 6, 8], groups: [['dust', 2], ['inferno', 1], [null, 1]] },
];

describe('SOQL.md examples on a fixed data set', () => {
  before(async () => {
    await loadEvents(con, FIXED);
  });
  for (const { q, seqs, groups } of EXAMPLES) {
    test(q, async () => {
      const query = parseSoql(q);
      const inMemory = FIXED.filter(compilePredicate(query, { now: NOW })).map((e) => e.seq);
      assert.deepEqual(inMemory, seqs, 'in-memory predicate');
      const { where, params } = compileDuckDbFilter(query, { now: NOW, datasetIds: DATASET_IDS });
      assert.deepEqual(await selectSeqs(con, where, params), seqs, 'DuckDB');
      if (!groups || !query.groupBy) return;
      const rows = await selectGroups(con, compileDuckDbGroupKey(query.groupBy), where, params);
      const idToName = new Map([...DATASET_IDS].map(([n, id]) => [id, n]));
      const got = rows.map(([k, n]) => [decodeGroupValue(query.groupBy!, k, idToName), n]);
      assert.deepEqual(got, groups);
    });
  }

  test('group by dataset and severity decode to names', async () => {
    const idToName = new Map([...DATASET_IDS].map(([n, id]) => [id, n]));
    const cases = [
      // ordered by count, then by the raw key (dataset_id, severity index)
      ['dataset', [['game', 3], ['matchmaking', 3], ['auth', 2]]],
      ['severity', [['error', 3], ['warn', 2], ['debug', 1], ['info', 1], ['fatal', 1]]],
    ] as const;
    for (const [field, expected] of cases) {
      const groupBy = parseSoql(`group by ${field}`).groupBy!;
      const rows = await selectGroups(con, compileDuckDbGroupKey(groupBy), 'TRUE', []);
      const got = rows.map(([k, n]) => [decodeGroupValue(groupBy, k, idToName), n]);
      assert.deepEqual(got, expected);
    }
  });
});

test('in-memory predicate and DuckDB select the same events (random queries and events)', async () => {
  await fc.assert(
    fc.asyncProperty(eventsArb(25), fc.array(queryArb(narrow), { minLength: 1, maxLength: 8 }), async (events, queries) => {
      await loadEvents(con, events);
      for (const query of queries) {
        const { where, params } = compileDuckDbFilter(query, { now: NOW, datasetIds: DATASET_IDS });
        assert.match(where, SQL_ALPHABET);
        const expected = events.filter(compilePredicate(query, { now: NOW })).map((e) => e.seq);
        assert.deepEqual(await selectSeqs(con, where, params), expected, printSoql(query));
      }
    }),
    { numRuns: 250 },
  );
});

test('group by a payload field: one group per JSON value, of its JSON type (random events, the key POST /query runs)', async () => {
  const idToName = new Map([...DATASET_IDS].map(([n, id]) => [id, n]));
  const pathArb = fc.array(fc.constantFrom('a', 'b', 'ping', 'arr', '0', 'x y', 'we`ird', '~/k'), { minLength: 1, maxLength: 2 });
  await fc.assert(
    fc.asyncProperty(eventsArb(25), pathArb, async (events, path) => {
      await loadEvents(con, events);
      const field: FieldRef = { kind: 'payload', path };
      const rows = await selectGroups(con, compileDuckDbGroupKey(field), 'TRUE', [], 1000);
      const got = rows
        .map(([k, n]) => [JSON.stringify(decodeGroupValue(field, k, idToName)), n] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      // In memory: the value at the path (as live tail finds it), compared as JSON; missing
      // and JSON null together, and so is every value of a payload DuckDB cannot read.
      const expected = new Map<string, number>();
      for (const e of events) {
        const v = duckDbCannotRead(JSON.stringify(e.payload)) ? undefined : lookupPayload(e.payload, path);
        const text = v === undefined || typeof v === 'symbol' ? 'null' : JSON.stringify(v);
        expected.set(text, (expected.get(text) ?? 0) + 1);
      }
      assert.deepEqual(got, [...expected].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), path.join('.'));
    }),
    { numRuns: 200 },
  );
});
