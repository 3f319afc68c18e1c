import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compilePredicate, parseSoql } from '../soql/index.js';
import { parsedPayload, type StoredEvent } from '../shared/event-record.js';
import { parseNdjson } from '../ingest/native/ndjson.js';
import type { NewEvent } from '../engine/event-store.js';
import { forEachCandidate, guardIndex, matchGuard, severityLevels } from './match-guard.js';

test('a guard is a top-level AND equality, else a contains without wildcard, on a text field or a payload key; canonical first', () => {
  const guard = (q: string) => {
    const g = matchGuard(parseSoql(q));
    return g && [g.kind, g.field, g.kind === 'equals' ? g.value : g.needle];
  };
  assert.deepEqual(guard('event == "player.ban"'), ['equals', 'event', 'player.ban']);
  assert.deepEqual(guard('payload.rule == "r1" AND source == "eu-1"'), ['equals', 'source', 'eu-1']);
  assert.deepEqual(guard('severity >= error AND payload.rule == r1'), ['equals', 'payload.rule', 'r1']);
  assert.deepEqual(guard('payload.a.b == "x"'), ['equals', 'payload.a.b', 'x']);
  assert.deepEqual(guard('payload.ping == "150"'), ['equals', 'payload.ping', '150']);
  // A contains, its text case-folded as the predicate folds it; an equality anywhere wins over it.
  assert.deepEqual(guard('event:Player.BAN'), ['contains', 'event', 'player.ban']);
  assert.deepEqual(guard('payload.rule:"R7." AND severity >= warn'), ['contains', 'payload.rule', 'r7.']);
  assert.deepEqual(guard('payload.rule:"r7." AND message:aimbot'), ['contains', 'message', 'aimbot']);
  assert.deepEqual(guard('message:aimbot AND payload.rule == "x"'), ['equals', 'payload.rule', 'x']);
  for (const q of ['event:player*', 'message:*aimbot*', 'event == "a" OR event == "b"', 'NOT event == "a"', 'payload.ping == 150', 'payload.ping:150', 'payload.ok == true', 'payload.x == null', 'payload.x:null', 'dataset == "game"', 'dataset:game', 'severity == error', 'event != "a"', 'event !: "a"', '"free text"', '']) {
    assert.equal(guard(q), undefined, q);
  }
});

// Events as ingest makes them (payload text written by JSON.stringify, the parsed object carried)
// and as read back from a store (text only), over a small vocabulary so that guards both pass and fail.
const keys = ['rule', 'map', 'a"b', 'ü', 'x\\y', '__proto__'];
const text = fc.constantFrom('r1', 'R1', 'r1.', 'r10', 'xr1.y', 'dust2', 'Dust2', '', 'ß', 'İ', '\ud800', '150');
const value = fc.oneof(text, fc.constantFrom(150, 0, -0, true, null), fc.constant({ k: 'r1' }), fc.constant(['r1']));
const rawEvent = fc.record({
  event: fc.constantFrom('kill', 'Kill', 'anticheat.flag', 'chat'),
  actor: fc.option(fc.constantFrom('p1', 'P1', 'bot-1')),
  source: fc.option(fc.constantFrom('eu-1', 'eu-10', 'EU-1')),
  message: fc.constantFrom('', 'aimbot detected', 'AIMBOT', 'hello'),
  severity: fc.constantFrom('info', 'warn', 'error'),
  payload: fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: 4 }),
});
const queries = [
  'event == "kill" AND severity >= warn',
  'event:KILL',
  'event:anticheat AND message:aimbot',
  'payload.rule == "r1" AND severity >= warn',
  'payload.rule == r1',
  'payload.rule:"R1."',
  'payload.rule:r1 AND NOT actor:bot*',
  'payload.map:dust2 AND payload.rule exists',
  'payload.ping == "150"',
  'payload.rule.k == "r1"',
  'payload.`a"b`:r1',
  'payload.`ü` == "ß"',
  'payload.`x\\y`:"r1"',
  'payload.__proto__:r1',
  'source == "eu-1" OR actor == "p1"',
  'actor == "p1" AND message:*aimbot*',
  'message == "" AND event == "chat"',
  'message:""',
  'severity >= error',
];

test('matching through the guard index selects exactly what every predicate selects (property)', () => {
  const monitors = queries.map((q) => {
    const query = parseSoql(q);
    return { q, predicate: compilePredicate(query, { now: 0 }), guard: matchGuard(query) };
  });
  const index = guardIndex(monitors);
  assert.ok(index.equals.length >= 3 && index.contains.length >= 4, 'equalities and contains on canonical and payload fields');
  const matched = new Set<string>();
  fc.assert(
    fc.property(fc.array(rawEvent, { minLength: 1, maxLength: 20 }), (raws) => {
      const ingested = parseNdjson(Buffer.from(raws.map((r) => JSON.stringify(r)).join('\n')), { datasetId: 'd', defaultSeverity: 1, now: 0, overflowFrom: undefined });
      assert.equal(ingested.failures.length, 0);
      for (const e of ingested.events) {
        const base = { seq: 0, event_id: e.eventId, ts: e.ts, ingested_at: 0, dataset: 'game', severity: e.severity, event: e.event, actor: e.actor, source: e.source, message: e.message, payloadJson: e.payload, bytes_raw: e.bytesRaw };
        // The same event with its parsed payload carried (the matcher's) and without (text only).
        for (const event of [{ ...base, [parsedPayload]: e[parsedPayload] }, base] as StoredEvent[]) {
          const found = new Set<string>();
          forEachCandidate(index, event, (m) => {
            assert.ok(!found.has(m.q), `${m.q} visited twice`);
            if (m.predicate(event)) found.add(m.q);
          });
          const expected = new Set(monitors.filter((m) => m.predicate(event)).map((m) => m.q));
          assert.deepEqual(found, expected, event.payloadJson);
          for (const q of found) matched.add(q);
        }
      }
    }),
    { numRuns: 300 },
  );
  // Not vacuous: nearly every monitor matched some event.
  assert.ok(matched.size >= queries.length - 2, `only ${[...matched].join(', ')} matched`);
});

test('ingest carries the parsed payload only when its text parses back to it', () => {
  const [plain, lone, none] = parseNdjson(Buffer.from([{ payload: { a: 1 } }, { payload: { a: '\ud800' } }, { event: 'x' }].map((r) => JSON.stringify(r)).join('\n')), { datasetId: 'd', defaultSeverity: 1, now: 0, overflowFrom: undefined }).events;
  assert.deepEqual(plain![parsedPayload], { a: 1 });
  assert.equal(lone![parsedPayload], undefined, 'a lone surrogate is replaced in the text: the object would differ');
  assert.deepEqual(JSON.parse(lone!.payload), { a: '\ufffd' });
  assert.deepEqual(none![parsedPayload], {});
  // Never sent anywhere: JSON (the events node) and structured clone (the engine worker) drop it.
  assert.equal(JSON.parse(JSON.stringify(plain))[String(parsedPayload)], undefined);
  assert.deepEqual(Object.keys(structuredClone(plain!)).sort(), Object.keys(plain!).sort());
  assert.equal(structuredClone(plain!)[parsedPayload], undefined);
});

test('severity levels: top-level AND comparisons of severity, when they rule a level out', () => {
  const levels = (q: string) => severityLevels(parseSoql(q));
  assert.deepEqual(levels('severity >= warn'), [false, false, true, true, true]);
  assert.deepEqual(levels('severity > warn AND source:*node-1'), [false, false, false, true, true]);
  assert.deepEqual(levels('severity <= info AND severity != debug'), [false, true, false, false, false]);
  assert.deepEqual(levels('severity in (warn, fatal) AND event:kill'), [false, false, true, false, true]);
  assert.deepEqual(levels('severity:error'), [false, false, false, true, false]);
  assert.deepEqual(levels('severity >= error AND severity < error'), [false, false, false, false, false]);
  for (const q of ['severity >= debug', 'severity >= warn OR event:kill', 'NOT severity >= warn', 'event:kill', '']) assert.equal(levels(q), undefined, q);
});

// Random monitors (top-level ANDs of guardable and unguardable items, severity comparisons among
// them) over random events, each read as ingest made it (with its parsed payload and without) and
// as the predicate sees it: the index's candidates that pass their predicate are exactly the
// monitors whose predicate passes.
const item = fc.oneof(
  fc.tuple(fc.constantFrom('>=', '>', '<=', '<', '==', '!=', ':'), fc.constantFrom('debug', 'info', 'warn', 'error', 'fatal')).map(([op, l]) => `severity ${op} ${l}`),
  fc.constantFrom('severity in (warn, fatal)', 'severity in (info)'),
  fc.constantFrom('event == "kill"', 'event:KILL', 'event:anticheat', 'message:aimbot', 'actor == "p1"', 'source:eu-1', 'source:eu*'),
  fc.constantFrom('payload.rule == "r1"', 'payload.rule:R1', 'payload.map:dust2', 'payload.rule exists', 'payload.ping == 150', 'payload.`ü` == "ß"'),
  fc.constantFrom('"aimbot"', 'NOT actor:bot*', 'event:kill OR severity >= error', 'dataset:game'),
);
const monitorQuery = fc.array(item, { minLength: 1, maxLength: 3 }).map((items) => items.join(' AND '));

test('matching through the index with severity levels, guards reading the ingested event, selects exactly what every predicate selects (property)', () => {
  let nonEmpty = 0;
  let severityOnly = 0;
  fc.assert(
    fc.property(fc.array(monitorQuery, { minLength: 1, maxLength: 12 }), fc.array(rawEvent, { minLength: 1, maxLength: 12 }), (qs, raws) => {
      const monitors = qs.map((q, i) => {
        const query = parseSoql(q);
        return { id: `${i}: ${q}`, predicate: compilePredicate(query, { now: 0 }), guard: matchGuard(query), levels: severityLevels(query) };
      });
      const index = guardIndex(monitors);
      severityOnly += index.severityGuarded.length;
      const ingested = parseNdjson(Buffer.from(raws.map((r) => JSON.stringify(r)).join('\n')), { datasetId: 'd', defaultSeverity: 1, now: 0, overflowFrom: undefined });
      for (const e of ingested.events) {
        const stored = { seq: 0, event_id: e.eventId, ts: e.ts, ingested_at: 0, dataset: 'game', severity: e.severity, event: e.event, actor: e.actor, source: e.source, message: e.message, payloadJson: e.payload, bytes_raw: e.bytesRaw } as StoredEvent;
        const expected = new Set(monitors.filter((m) => m.predicate(stored)).map((m) => m.id));
        if (expected.size) nonEmpty++;
        const textOnly: NewEvent = { ...e, [parsedPayload]: undefined };
        for (const event of [e, textOnly, stored]) {
          const found = new Set<string>();
          forEachCandidate(index, event, (m) => {
            assert.ok(!found.has(m.id), `${m.id} visited twice`);
            if (m.predicate(stored)) found.add(m.id);
          });
          assert.deepEqual(found, expected, `${e.payload} severity ${e.severity}`);
        }
      }
    }),
    { numRuns: 400 },
  );
  assert.ok(nonEmpty > 100 && severityOnly > 100, `not vacuous: ${nonEmpty} events matched, ${severityOnly} monitors looked up by severity`);
});

test('a contains guard remembers its field\'s values while most repeat, and stops when most are new; the candidates are the same', () => {
  const monitors = ['message:aimbot', 'message:AIM AND severity >= warn', 'event:kill'].map((q) => {
    const query = parseSoql(q);
    return { q, predicate: compilePredicate(query, { now: 0 }), guard: matchGuard(query) };
  });
  const index = guardIndex(monitors);
  const event = (message: string, name: string) => ({ ...parseNdjson(Buffer.from(JSON.stringify({ event: name, message, severity: 'warn' })), { datasetId: 'd', defaultSeverity: 1, now: 0, overflowFrom: undefined }).events[0]! });
  const candidates = (e: NewEvent) => {
    const found: string[] = [];
    forEachCandidate(index, e, (m) => found.push(m.q));
    return found.sort();
  };
  for (let i = 0; i < 10_000; i++) {
    // Messages all new (half with the needle in some case), event names from three.
    const message = i % 2 ? `player ${i} AimBot` : `player ${i} clean`;
    const name = ['kill', 'KILL', 'chat'][i % 3]!;
    assert.deepEqual(candidates(event(message, name)), [...(i % 2 ? ['message:AIM AND severity >= warn', 'message:aimbot'] : []), ...(name === 'chat' ? [] : ['event:kill'])].sort(), `${message} ${name}`);
  }
  const message = index.fields.find((f) => f.needles.some((n) => n.needle === 'aimbot'))!;
  const eventField = index.fields.find((f) => f.needles.some((n) => n.needle === 'kill'))!;
  assert.equal(message.memo, undefined, 'new values: the memo is dropped');
  assert.equal(eventField.memo?.size, 3, 'three values: remembered');
});
