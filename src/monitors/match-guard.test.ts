import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePredicate, parseSoql } from '../query/soql/index.js';
import type { StoredEvent } from '../stores/events/event-record.js';
import { guardIndex, matchGuard } from './match-guard.js';

const event = (fields: Partial<StoredEvent> & { payload?: unknown }): StoredEvent => {
  const { payload, ...rest } = fields;
  return { seq: 0, event_id: '0190a0b0-0000-7000-8000-000000000000', ts: 0, ingested_at: 0, dataset: 'game', severity: 1, event: 'kill', actor: null, source: null, message: '', bytes_raw: 10, payloadJson: JSON.stringify(payload ?? {}), ...rest };
};

test('a guard is a top-level AND equality on a text field or a payload key, canonical first; nothing else', () => {
  const guard = (q: string) => {
    const g = matchGuard(parseSoql(q));
    return g && [g.field, g.value];
  };
  assert.deepEqual(guard('event == "player.ban"'), ['event', 'player.ban']);
  assert.deepEqual(guard('payload.rule == "r1" AND source == "eu-1"'), ['source', 'eu-1']);
  assert.deepEqual(guard('severity >= error AND payload.rule == r1'), ['payload.rule', 'r1']);
  assert.deepEqual(guard('payload.a.b == "x"'), ['payload.a.b', 'x']);
  for (const q of ['event:player.ban', 'event == "a" OR event == "b"', 'NOT event == "a"', 'payload.ping == 150', 'payload.ok == true', 'payload.x == null', 'dataset == "game"', 'severity == error', 'event != "a"', '']) {
    assert.equal(guard(q), undefined, q);
  }
  assert.deepEqual(guard('payload.ping == "150"'), ['payload.ping', '150']);
});

test('matching through the guard index selects exactly what every predicate selects', () => {
  const queries = [
    'event == "kill" AND severity >= warn',
    'payload.rule == "r1" AND payload.score > 0.5',
    'payload.rule == r2',
    'payload.ping == "150"',
    'source == "eu-1" OR actor == "x"',
    'actor == "p1" AND message:*aimbot*',
    'message == "" AND event == "chat"',
    'payload.nested.k == "v"',
  ];
  const monitors = queries.map((q) => {
    const query = parseSoql(q);
    return { q, predicate: compilePredicate(query, { now: 0 }), guard: matchGuard(query) };
  });
  const values = [undefined, null, 'r1', 'r2', 'R1', 150, '150', true, { k: 'v' }, ['r1']];
  const events: StoredEvent[] = [];
  let seed = 42;
  const pick = <T>(xs: readonly T[]) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return xs[seed % xs.length]!;
  };
  for (let i = 0; i < 2000; i++) {
    events.push(
      event({
        event: pick(['kill', 'chat', 'Kill']),
        severity: i % 5,
        actor: pick([null, 'p1', 'x']),
        source: pick([null, 'eu-1', 'eu-10']),
        message: pick(['', 'aimbot detected', 'hello']),
        payload: { rule: pick(values), score: pick([0, 0.3, 0.9]), ping: pick(values), nested: pick([{ k: pick(values) }, { k: 'v' }, 'v']) },
      }),
    );
  }
  const index = guardIndex(monitors);
  const matched = new Set<string>();
  for (const e of events) {
    const found = new Set<string>();
    for (const field of index.fields) {
      const value = field.read(e);
      const candidates = typeof value === 'string' ? field.byValue.get(value) : undefined;
      if (candidates) for (const m of candidates) if (m.predicate(e)) found.add(m.q);
    }
    for (const m of index.unguarded) if (m.predicate(e)) found.add(m.q);
    const expected = new Set(monitors.filter((m) => m.predicate(e)).map((m) => m.q));
    assert.deepEqual(found, expected, e.payloadJson);
    for (const q of found) matched.add(q);
  }
  // Not vacuous: every monitor matched some event, and the guarded ones were looked up.
  assert.deepEqual([...matched].sort(), [...queries].sort());
  assert.equal(index.unguarded.length, 1);
});
