// The explorer's SOQL text helpers (web/src/pages/explorer/soql-text.ts) against the server's
// own parser and predicate: the clauses click-to-filter writes parse and keep exactly the
// events holding the value; the range's bounds wrap any query without changing its meaning;
// an error's position maps back to the reader's text.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compilePredicate, parseSoql } from '../soql/index.js';
import { AppError } from '../errors/app-error.js';
import type { StoredEvent } from '../shared/event-record.js';
import { tsImport } from 'tsx/esm/api';

// web/src is TypeScript outside src/ (which `npm test` runs transpiled into dist-test/): loaded through tsx.
const {
  addFilter,
  binWidth,
  boundsText,
  durationMs,
  filterClause,
  queryKind,
  rangeFromParams,
  rangeParams,
  splitQuery,
  valueClause,
  withBounds,
} = (await tsImport('../../web/src/pages/explorer/soql-text.ts', import.meta.url)) as typeof import('../../web/src/pages/explorer/soql-text.js');

const now = Date.parse('2026-05-01T12:00:00Z');

function event(overrides: Partial<StoredEvent> & { payload?: Record<string, unknown> } = {}): StoredEvent {
  const { payload, ...rest } = overrides;
  return {
    seq: 1,
    event_id: '01a2148c-3266-76f3-96dc-16dc0f14a55d',
    ts: now - 60_000,
    ingested_at: now - 59_000,
    dataset: 'game',
    severity: 1,
    event: 'player.join',
    actor: 'player-1',
    source: 'eu-west-1',
    message: 'hello',
    payloadJson: JSON.stringify(payload ?? {}),
    bytes_raw: 100,
    ...rest,
  };
}

const matches = (q: string, ev: StoredEvent): boolean => compilePredicate(parseSoql(q), { now })(ev);

function parseErrorPosition(q: string): number {
  try {
    parseSoql(q);
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return error.extra.position as number;
  }
  assert.fail(`${q} parsed`);
}

/** Strings with the characters SOQL treats specially. */
const tricky = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '9', ' ', '"', '\\', '`', '(', ')', ',', '*', ':', '.', '-', '=', '<', '!', 'é', '\n'), minLength: 1, maxLength: 12 });
const key = fc.oneof(fc.constantFrom('ping', 'map', 'odd key', 'a.b', 'and', 'or', 'stats', 'group', 'org_id', '`tick`', '0'), tricky);

describe('explorer SOQL text: click-to-filter clauses', () => {
  test('a payload value of any JSON type filters to the events that hold it (server parser and predicate)', () => {
    const leaf = fc.oneof(tricky, fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 3 }), leaf, leaf, (path, value, other) => {
        const clause = filterClause(['payload', ...path], value);
        assert.ok(clause !== undefined, `no clause for ${JSON.stringify(path)}`);
        const payloadWith = (leafValue: unknown): Record<string, unknown> => {
          const payload: Record<string, unknown> = {};
          let cursor = payload;
          path.slice(0, -1).forEach((k) => (cursor = cursor[k] = {} as Record<string, unknown>));
          cursor[path[path.length - 1]!] = leafValue;
          return payload;
        };
        assert.ok(matches(clause, event({ payload: payloadWith(value) })), `${clause} does not match ${JSON.stringify(payloadWith(value))}`);
        // Another value matches only when the clause means it too (`:` is "contains" on text).
        if (matches(clause, event({ payload: payloadWith(other) })) && JSON.stringify(other) !== JSON.stringify(value)) {
          // A bare number, boolean or null also reads as text, which `:` looks for in a string.
          const text = typeof value === 'string' ? value.slice(0, 200) : String(value);
          assert.ok(typeof other === 'string' && other.toLowerCase().includes(text.toLowerCase()), `${clause} also matches ${JSON.stringify(other)}`);
        }
      }),
      { numRuns: 1000 },
    );
  });

  test('canonical fields: text, severity, dataset, times, numbers, ids', () => {
    const ev = event({ message: 'say "hi" \\ (now)', source: 'eu-west-1', actor: 'true' });
    for (const [path, value] of [
      [['message'], ev.message],
      [['source'], ev.source],
      [['actor'], ev.actor],
      [['event'], ev.event],
      [['dataset'], 'game'],
      [['severity'], 'info'],
      [['ts'], new Date(ev.ts).toISOString()],
      [['ingested_at'], new Date(ev.ingested_at).toISOString()],
      [['event_id'], ev.event_id],
      [['bytes_raw'], 100],
    ] as const) {
      const clause = filterClause(path, value)!;
      assert.ok(matches(clause, ev), `${clause}`);
    }
    assert.equal(filterClause(['message'], 'say "hi" \\ (now)'), 'message:"say \\"hi\\" \\\\ (now)"');
    assert.equal(filterClause(['source'], 'eu-west-1'), 'source:eu-west-1');
    assert.equal(filterClause(['actor'], 'true'), 'actor:"true"');
    assert.equal(filterClause(['payload', 'odd key'], 'x'), 'payload.`odd key`:x');
    assert.equal(filterClause(['payload', 'ping'], 150), 'payload.ping:150');
    assert.equal(filterClause(['payload', 'ping'], '150'), 'payload.ping:"150"');
    assert.equal(filterClause(['payload', 'x'], ''), 'payload.x == ""');
    // Not expressible: org_id (from the token), an empty key, objects.
    assert.equal(filterClause(['org_id'], 'o'), undefined);
    assert.equal(filterClause(['payload', ''], 'o'), undefined);
    assert.equal(filterClause(['payload', 'o'], { a: 1 }), undefined);
    // A long text is cut: `:` is "contains", so the prefix still matches.
    const long = 'x'.repeat(5000);
    assert.ok(matches(filterClause(['message'], long)!, event({ message: long })));
    assert.equal(valueClause('payload.map', 'de_dust2'), 'payload.map:de_dust2');
  });
});

describe('explorer SOQL text: splitting, the range bounds, error positions', () => {
  test('the group by / stats clause is found outside values and strings', () => {
    assert.deepEqual(splitQuery('severity >= warn group by source'), { filter: 'severity >= warn', filterStart: 0, clause: 'group by source', clauseStart: 17 });
    assert.equal(splitQuery('event:group by:x').clause, '', '`group` after an operator is a value');
    assert.equal(splitQuery('"group by x"').clause, '');
    assert.equal(splitQuery('stats > 3').clause, '', 'stats is a payload key unless an aggregate follows');
    assert.equal(splitQuery('x in (group, by) stats count() by bin(1m)').clause, 'stats count() by bin(1m)');
    assert.equal(splitQuery('  stats count()').filter, '');
    assert.equal(queryKind('a:1 GROUP BY b'), 'groups');
    assert.equal(queryKind('stats p95(payload.ping) by source'), 'stats');
    assert.equal(queryKind('stats:1'), 'events');
  });

  test('wrapped in bounds, a query parses and keeps its meaning; errors map back to where the reader wrote them', () => {
    const queries = [
      '',
      'severity >= warn',
      'a:1 OR b:2',
      '(event:player.join OR event:player.leave) AND NOT actor:bot-*',
      '"connection lost" AND source:srv-*',
      'dataset in (game, auth) AND severity >= warn group by source',
      'severity >= error group by payload.map',
      'stats count() by bin(1m)',
      'event == "match.end" stats avg(payload.duration), p95(payload.ping) by payload.map',
    ];
    for (const q of queries) {
      for (const bounds of [boundsText({ kind: 'relative', range: '1h' }), boundsText({ kind: 'custom', from: now - 3_600_000, to: now })]) {
        const sent = withBounds(q, bounds);
        const query = parseSoql(sent.q);
        assert.equal(Boolean(query.groupBy), queryKind(q) === 'groups', sent.q);
        assert.equal(Boolean(query.stats), queryKind(q) === 'stats', sent.q);
      }
    }
    // `a OR b` inside bounds: an event outside the range never matches.
    const sent = withBounds('source:eu OR actor:player-1', boundsText({ kind: 'custom', from: now - 60_000, to: now }));
    assert.ok(matches(sent.q, event({ ts: now - 30_000 })));
    assert.ok(!matches(sent.q, event({ ts: now - 120_000 })));

    const cases: Array<[string, string]> = [
      ['source:srv-1 AND severity >= banana', 'banana'],
      ['  payload.x > 1 AND ts >= nope', 'nope'],
      ['event:x stats count() by bin(7x)', '7x'],
      ['a:1 group by', ''],
      ['message:"never closed', '"never closed'],
      ['a:1 AND (b:2', '(b:2'],
      ['a:1) AND b:2', ') AND'],
      ['(a:1 OR (b:2) group by x', 'group'],
      ['a:1 AND org_id:x', 'org_id:x'],
    ];
    for (const [q, at] of cases) {
      const wrapped = withBounds(q, boundsText({ kind: 'relative', range: '15m' }));
      const position = wrapped.toUser(parseErrorPosition(wrapped.q));
      assert.equal(q.slice(position, position + at.length), at, `${q}: position ${position}`);
      if (at === '') assert.equal(position, q.length);
    }
  });

  test('adding a filter keeps an OR together and the clause last', () => {
    assert.equal(addFilter('', 'source:x'), 'source:x');
    assert.equal(addFilter('a:1', 'source:x'), 'a:1 AND source:x');
    assert.equal(addFilter('a:1 OR b:2', 'source:x'), '(a:1 OR b:2) AND source:x');
    assert.equal(addFilter('(a:1 OR b:2)', 'source:x'), '(a:1 OR b:2) AND source:x');
    assert.equal(addFilter('message:"this or that"', 'source:x'), 'message:"this or that" AND source:x');
    assert.equal(addFilter('a:1 group by source', 'source:x'), 'a:1 AND source:x group by source');
    assert.equal(addFilter('stats count() by source', 'source:x'), 'source:x stats count() by source');
    const ev = event({ source: 'eu-west-1', actor: 'player-9' });
    assert.ok(!matches(addFilter('actor:player-9 OR source:nowhere', 'source:elsewhere'), ev));
  });

  test('bin widths keep the histogram at most 120 bins; ranges round-trip through the URL', () => {
    for (const span of [15 * 60_000, 3_600_000, 86_400_000, 7 * 86_400_000, 90_000, 37 * 86_400_000]) {
      const width = binWidth(span);
      assert.ok(span / durationMs(width) <= 120, `${width} over ${span}`);
      parseSoql(`ts >= now-1h stats count() by severity, bin(${width})`);
    }
    assert.equal(binWidth(3_600_000), '30s');
    assert.equal(binWidth(86_400_000), '15m');
    assert.equal(binWidth(7 * 86_400_000), '2h');
    const custom = { kind: 'custom' as const, from: now - 1000, to: now };
    assert.deepEqual(rangeFromParams(new URLSearchParams(rangeParams(custom))), custom);
    assert.deepEqual(rangeFromParams(new URLSearchParams('range=24h')), { kind: 'relative', range: '24h' });
    assert.deepEqual(rangeFromParams(new URLSearchParams('range=custom&from=x')), { kind: 'relative', range: '1h' });
  });
});
