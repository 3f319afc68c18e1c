/** Hostile values and keys end up as parameters: they match as plain text and harm nothing. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError } from '../../errors/app-error.js';
import type { MemoryEvent } from '../../soql/predicate.js';
import { compilePredicate, parseSoql } from '../../soql/index.js';
import { compileDuckDbFilter } from '../soql-compile.js';
import { quoteString } from '../../soql/print.js';
import { DATASET_IDS, NOW } from '../../soql/testkit.test.js';
import { loadEvents, openEventsDb, selectSeqs } from './soql-testkit.test.js';

const HOSTILE = [
  "'; DROP TABLE events; --",
  "' OR '1'='1",
  '" OR 1=1 --',
  '/* comment */ x',
  "a'); DELETE FROM events WHERE ('1'='1",
  '\\\'; SELECT 1; --',
  '$1 ? ?? :name',
  '%_\\',
  'naïve 😀 ‮rtl‬ \u0000 nul',
  "'".repeat(500),
  'x'.repeat(1900), // the longest literal that fits twice in a 4,096-character query
];

let con: DuckDBConnection;
const base: MemoryEvent = {
  seq: 0, event_id: '0b6d4f2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d', ts: NOW, ingested_at: NOW, dataset: 'game', severity: 1,
  event: 'e', actor: null, source: null, message: 'plain', payload: {}, bytes_raw: 1,
};
/** Event 2k+1 carries hostile value k in its message, source and payload; 2k+2 in a payload key. */
const EVENTS: MemoryEvent[] = HOSTILE.flatMap((h, k) => [
  { ...base, seq: 2 * k + 1, message: `before ${h} after`, source: h, payload: { v: h } },
  { ...base, seq: 2 * k + 2, payload: { [h]: 1 } },
]);

before(async () => {
  con = await openEventsDb();
  await con.run('CREATE TABLE sentinel (x INTEGER)');
  await con.run('INSERT INTO sentinel VALUES (42)');
  await loadEvents(con, EVENTS);
});
after(() => con.closeSync());

async function intact(): Promise<void> {
  // loadEvents stores each event under two tenants.
  const count = await con.runAndReadAll('SELECT count(*) AS n FROM events');
  assert.equal(Number(count.getRowObjects()[0]!['n']), 2 * EVENTS.length);
  const tenants = await con.runAndReadAll('SELECT count(*) AS n FROM event_tenants');
  assert.equal(Number(tenants.getRowObjects()[0]!['n']), 2);
  const sentinel = await con.runAndReadAll('SELECT x FROM sentinel');
  assert.deepEqual(sentinel.getRowObjects(), [{ x: 42 }]);
}

const backquote = (key: string): string => `\`${key.replace(/`/g, '``')}\``;

for (const [k, h] of HOSTILE.entries()) {
  test(`hostile text #${k}: ${JSON.stringify(h.slice(0, 30))}`, async () => {
    const queries: [string, number[]][] = [
      [quoteString(h), [2 * k + 1]],
      [`source == ${quoteString(h)}`, [2 * k + 1]],
      [`payload.v:${quoteString(h)}`, [2 * k + 1]],
      [`message:${quoteString(h)} AND NOT source != ${quoteString(h)}`, [2 * k + 1]],
      [`payload.${backquote(h)} == 1`, [2 * k + 2]],
      [`${backquote(h)} exists`, [2 * k + 2]],
    ];
    for (const [q, seqs] of queries) {
      const query = parseSoql(q);
      const { where, params } = compileDuckDbFilter(query, { now: NOW, datasetIds: DATASET_IDS });
      for (const piece of [h, h.slice(0, 8)].filter((p) => p.length > 2)) assert.ok(!where.includes(piece), where);
      assert.match(where, /^[A-Za-z0-9_ (),?=<>'\\]*$/);
      const got = await selectSeqs(con, where, params);
      assert.deepEqual(got, seqs, q.slice(0, 80));
      assert.deepEqual(EVENTS.filter(compilePredicate(query, { now: NOW })).map((e) => e.seq), seqs, q.slice(0, 80));
      await intact();
    }
  });
}

test('a hostile dataset name is a not_found error, never SQL', async () => {
  for (const h of HOSTILE) {
    const query = parseSoql(`dataset == ${quoteString(h)}`);
    assert.throws(() => compileDuckDbFilter(query, { now: NOW, datasetIds: DATASET_IDS }), (e: unknown) => {
      assert.ok(e instanceof AppError);
      assert.equal(e.code, 'not_found');
      assert.equal(e.message, `dataset "${h}" does not exist`);
      return true;
    });
    // ordering comparisons select by name in code: hostile text is just a bound
    const { where, params } = compileDuckDbFilter(parseSoql(`dataset > ${quoteString(h)}`), { now: NOW, datasetIds: DATASET_IDS });
    await selectSeqs(con, where, params);
  }
  await intact();
});
