/** What valid queries parse to. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Expr, FieldRef, SoqlQuery, Value } from './ast.js';
import { parseSoql, printSoql, withoutPositions } from './index.js';

const canonical = (name: string): FieldRef => ({ kind: 'canonical', name } as FieldRef);
const payload = (...path: string[]): FieldRef => ({ kind: 'payload', path });
const bare = (text: string): Value => ({ type: 'text', text, quoted: false });
const quoted = (text: string): Value => ({ type: 'text', text, quoted: true });
const cmp = (field: FieldRef, op: string, value: Value, position = 0): Expr =>
  ({ type: 'compare', field, op, value, position }) as Expr;
const sev = (level: number): Value => ({ type: 'severity', level });
const filterOf = (q: string): Expr | null => withoutPositions(parseSoql(q)).filter;
const strip = (e: Expr): Expr => withoutPositions({ filter: e, groupBy: null }).filter!;

test('severity >= warn', () => {
  assert.deepEqual(parseSoql('severity >= warn'), { filter: cmp(canonical('severity'), '>=', sev(2)), groupBy: null });
});

test('source:eu-west-1 AND severity >= error', () => {
  assert.deepEqual(parseSoql('source:eu-west-1 AND severity >= error').filter, {
    type: 'and',
    position: 0,
    items: [cmp(canonical('source'), ':', bare('eu-west-1'), 0), cmp(canonical('severity'), '>=', sev(3), 21)],
  });
});

test('dataset:matchmaking AND event == "match.start" AND payload.region:eu*', () => {
  assert.deepEqual(parseSoql('dataset:matchmaking AND event == "match.start" AND payload.region:eu*').filter, {
    type: 'and',
    position: 0,
    items: [
      cmp(canonical('dataset'), ':', bare('matchmaking'), 0),
      cmp(canonical('event'), '==', quoted('match.start'), 24),
      cmp(payload('region'), ':', bare('eu*'), 51),
    ],
  });
});

test('payload.ping > 150 AND ts >= now-15m', () => {
  assert.deepEqual(filterOf('payload.ping > 150 AND ts >= now-15m'), strip({
    type: 'and',
    position: 0,
    items: [
      cmp(payload('ping'), '>', bare('150')),
      cmp(canonical('ts'), '>=', { type: 'time', time: { kind: 'relative', amount: 15, unit: 'm' } }),
    ],
  }));
});

test('(event:player.join OR event:player.leave) AND NOT actor:bot-*', () => {
  assert.deepEqual(parseSoql('(event:player.join OR event:player.leave) AND NOT actor:bot-*').filter, {
    type: 'and',
    position: 1,
    items: [
      { type: 'or', position: 1, items: [cmp(canonical('event'), ':', bare('player.join'), 1), cmp(canonical('event'), ':', bare('player.leave'), 22)] },
      { type: 'not', position: 46, expr: cmp(canonical('actor'), ':', bare('bot-*'), 50) },
    ],
  });
});

test('"connection lost" AND source:srv-*', () => {
  assert.deepEqual(filterOf('"connection lost" AND source:srv-*'), {
    type: 'and',
    position: 0,
    items: [{ type: 'freetext', text: 'connection lost', position: 0 }, cmp(canonical('source'), ':', bare('srv-*'))],
  });
});

test('dataset in (game, auth) AND severity >= warn group by source', () => {
  assert.deepEqual(withoutPositions(parseSoql('dataset in (game, auth) AND severity >= warn group by source')), {
    filter: {
      type: 'and',
      position: 0,
      items: [
        { type: 'in', field: canonical('dataset'), values: [bare('game'), bare('auth')], position: 0 },
        cmp(canonical('severity'), '>=', sev(2)),
      ],
    },
    groupBy: canonical('source'),
  });
});

test('severity >= error group by payload.map', () => {
  assert.deepEqual(parseSoql('severity >= error group by payload.map'), {
    filter: cmp(canonical('severity'), '>=', sev(3)),
    groupBy: payload('map'),
  });
});

test('the empty query (and a blank one) matches everything', () => {
  assert.deepEqual(parseSoql(''), { filter: null, groupBy: null });
  assert.deepEqual(parseSoql(' \t\n '), { filter: null, groupBy: null });
  assert.deepEqual(parseSoql('group by payload.map'), { filter: null, groupBy: payload('map') });
});

test('keywords are case-insensitive; AND binds tighter than OR', () => {
  const a = cmp(payload('a'), ':', bare('1'));
  const b = cmp(payload('b'), ':', bare('2'));
  const c = cmp(payload('c'), ':', bare('3'));
  const expected: Expr = { type: 'or', position: 0, items: [a, { type: 'and', position: 0, items: [b, c] }] };
  assert.deepEqual(filterOf('a:1 or b:2 and c:3'), expected);
  assert.deepEqual(filterOf('a:1 OR b:2 AnD c:3'), expected);
  assert.deepEqual(filterOf('not a:1'), { type: 'not', position: 0, expr: a });
  assert.deepEqual(withoutPositions(parseSoql('a:1 GROUP BY b')).groupBy, payload('b'));
  assert.deepEqual(filterOf('a IN (1)'), { type: 'in', field: payload('a'), values: [bare('1')], position: 0 });
  assert.deepEqual(filterOf('a EXISTS'), { type: 'exists', field: payload('a'), position: 0 });
});

test('fields: canonical, payload paths, backquoted keys', () => {
  assert.deepEqual(filterOf('Severity >= WARN'), cmp(canonical('severity'), '>=', sev(2)));
  assert.deepEqual(filterOf('payload.org_id:x'), cmp(payload('org_id'), ':', bare('x')));
  assert.deepEqual(filterOf('payload.severity:x'), cmp(payload('severity'), ':', bare('x')));
  assert.deepEqual(filterOf('match.map:x'), cmp(payload('match', 'map'), ':', bare('x')));
  assert.deepEqual(filterOf('payload.`odd key`.`a.b`:x'), cmp(payload('odd key', 'a.b'), ':', bare('x')));
  assert.deepEqual(filterOf('`we``ird` exists'), { type: 'exists', field: payload('we`ird'), position: 0 });
  assert.deepEqual(filterOf('`ts` >= now'), cmp(canonical('ts'), '>=', { type: 'time', time: { kind: 'relative', amount: 0, unit: 's' } }));
  assert.deepEqual(filterOf('payload exists'), { type: 'exists', field: payload('payload'), position: 0 });
  assert.deepEqual(filterOf('group:x'), cmp(payload('group'), ':', bare('x')));
});

test('values: strings, escapes, times, numbers, UUIDs', () => {
  assert.deepEqual(filterOf('message:"say \\"hi\\" \\\\o/"'), cmp(canonical('message'), ':', quoted('say "hi" \\o/')));
  const at = (q: string): unknown => (filterOf(q) as { value: Value }).value;
  assert.deepEqual(at('ts >= 2024-05-01T10:00:00Z'), { type: 'time', time: { kind: 'absolute', ms: Date.UTC(2024, 4, 1, 10) } });
  assert.deepEqual(at('ts >= 2024-05-01T12:00:00.5+02:00'), { type: 'time', time: { kind: 'absolute', ms: Date.UTC(2024, 4, 1, 10, 0, 0, 500) } });
  assert.deepEqual(at('ts >= "2024-05-01"'), { type: 'time', time: { kind: 'absolute', ms: Date.UTC(2024, 4, 1) } });
  assert.deepEqual(at('ts >= -1h'), { type: 'time', time: { kind: 'relative', amount: 1, unit: 'h' } });
  assert.deepEqual(at('ingested_at < NOW-2d'), { type: 'time', time: { kind: 'relative', amount: 2, unit: 'd' } });
  assert.deepEqual(at('ts > now-0m'), { type: 'time', time: { kind: 'relative', amount: 0, unit: 's' } });
  assert.deepEqual(at('bytes_raw >= 1.5e3'), { type: 'number', value: 1500, text: '1.5e3' });
  assert.deepEqual(at('event_id == F47AC10B-58CC-4372-A567-0E02B2C3D479'), { type: 'uuid', uuid: 'f47ac10b-58cc-4372-a567-0e02b2c3d479' });
  assert.deepEqual(at('severity:"Fatal"'), sev(4));
  assert.deepEqual(at('ping:-3'), bare('-3'));
  assert.deepEqual(at('actor : =x'), bare('=x'));
  assert.deepEqual(at('payload.ok == true'), bare('true'));
  assert.deepEqual(at('source:AND'), bare('AND'));
});

test('positions point at each node', () => {
  const q: SoqlQuery = parseSoql('  NOT (a:1 OR "t") AND b exists');
  assert.deepEqual(q.filter, {
    type: 'and',
    position: 2,
    items: [
      {
        type: 'not',
        position: 2,
        expr: { type: 'or', position: 7, items: [cmp(payload('a'), ':', bare('1'), 7), { type: 'freetext', text: 't', position: 14 }] },
      },
      { type: 'exists', field: payload('b'), position: 23 },
    ],
  });
});

test('limits are inclusive: 4,096 characters, nesting 32, 100 values', () => {
  assert.doesNotThrow(() => parseSoql('message:' + 'x'.repeat(4088)));
  assert.doesNotThrow(() => parseSoql('('.repeat(32) + 'a:b' + ')'.repeat(32)));
  assert.doesNotThrow(() => parseSoql('NOT '.repeat(16) + '('.repeat(16) + 'a:b' + ')'.repeat(16)));
  assert.doesNotThrow(() => parseSoql(`a in (${Array.from({ length: 100 }, (_, i) => i).join(',')})`));
});

test('printing is canonical', () => {
  assert.equal(printSoql(parseSoql('a:1 or (b:2 and not c exists)')), 'payload.a:1 OR payload.b:2 AND NOT payload.c exists');
  assert.equal(printSoql(parseSoql('(a:1 or b:2) and `x y`  ==  "q\\""')), '(payload.a:1 OR payload.b:2) AND payload.`x y` == "q\\""');
  assert.equal(printSoql(parseSoql('ts > 2024-05-01t10:00+01:00 group by SEVERITY')), 'ts > 2024-05-01T09:00:00.000Z group by severity');
});
