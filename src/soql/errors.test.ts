/** Malformed queries: each must fail with the right code, position, near and field. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../errors/app-error.js';
import { parseSoql } from './index.js';

type Row = [q: string, code: 'soql_parse_error' | 'soql_reserved_field', position: number, near: string, field: string];

const P = 'soql_parse_error';
const R = 'soql_reserved_field';

const inList101 = `source in (${Array.from({ length: 101 }, (_, i) => `v${i}`).join(', ')})`;

const TABLE: Row[] = [
  // values of the wrong type for their field
  ['ts >= banana', P, 6, 'banana', 'ts'],
  ['severity >= warning', P, 12, 'warning', 'severity'],
  ['severity:loud', P, 9, 'loud', 'severity'],
  ['severity >= "warm"', P, 12, '"warm"', 'severity'],
  ['ts >= now+5m', P, 6, 'now+5m', 'ts'],
  ['ts > -5y', P, 5, '-5y', 'ts'],
  ['ts > -5H', P, 5, '-5H', 'ts'],
  ['ingested_at < 2024-13-01', P, 14, '2024-13-01', 'ingested_at'],
  ['ts >= 2023-02-30T00:00:00Z', P, 6, '2023-02-30T00:00:00Z', 'ts'],
  ['ts >= 10000-01-01', P, 6, '10000-01-01', 'ts'],
  ['ts >= 9999-12-31T23:59:59.999-01:00', P, 6, '9999-12-31T23:59:59.', 'ts'],
  ['ts >= now-99999999999999w', P, 6, 'now-99999999999999w', 'ts'],
  ['bytes_raw > big', P, 12, 'big', 'bytes_raw'],
  ['bytes_raw > 1e999', P, 12, '1e999', 'bytes_raw'],
  ['event_id:not-a-uuid', P, 9, 'not-a-uuid', 'event_id'],
  ['event_id > 0b6d4f2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d', P, 9, '> 0b6d4f2a-1c3e-4a5b', 'event_id'],
  ['dataset:gam*', P, 8, 'gam*', 'dataset'],
  // operators
  ['source = eu', P, 7, '= eu', 'source'],
  ['source => eu', P, 7, '=> eu', 'source'],
  ['payload.ping >> 5', P, 13, '>> 5', 'payload.ping'],
  ['ping <> 5', P, 5, '<> 5', 'ping'],
  ['source', P, 6, '', 'source'],
  ['source eu', P, 7, 'eu', 'source'],
  // missing values
  ['source:', P, 7, '', 'source'],
  ['severity >=', P, 11, '', 'severity'],
  ['severity >= )', P, 12, ')', 'severity'],
  // missing or unexpected tokens
  ['source:eu AND', P, 13, '', ''],
  ['source:eu OR', P, 12, '', ''],
  ['AND source:eu', P, 0, 'AND source:eu', ''],
  ['source:eu OR OR source:us', P, 13, 'OR source:us', ''],
  ['NOT', P, 3, '', ''],
  ['()', P, 1, ')', ''],
  ['source:eu source:us', P, 10, 'source:us', ''],
  ['source:eu && severity:warn', P, 10, '&& severity:warn', ''],
  ['*', P, 0, '*', ''],
  ['"x" == 1', P, 0, '"x" == 1', ''],
  ['a:b OR group by x', P, 7, 'group by x', ''],
  // strings, keys, parentheses
  ['(source:eu', P, 0, '(source:eu', ''],
  ['source:eu AND (severity >= warn', P, 14, '(severity >= warn', ''],
  ['(source:eu severity:warn)', P, 11, 'severity:warn)', ''],
  ['source:eu)', P, 9, ')', ''],
  ['source:"eu', P, 7, '"eu', ''],
  ['"connection lost', P, 0, '"connection lost', ''],
  ['message:"a\\nb"', P, 10, '\\nb"', ''],
  ['payload.:x', P, 8, ':x', ''],
  ['payload.`unclosed:x', P, 8, '`unclosed:x', ''],
  ['``:x', P, 0, '``:x', ''],
  ['ts.x:1', P, 0, 'ts.x:1', 'ts'],
  // in lists
  ['source in game', P, 10, 'game', 'source'],
  ['source in (a, b', P, 10, '(a, b', 'source'],
  ['source in ()', P, 11, ')', 'source'],
  ['source in (a b)', P, 13, 'b)', 'source'],
  ['source in (a,)', P, 13, ')', 'source'],
  [inList101, P, inList101.indexOf('v100'), 'v100)', 'source'],
  // group by
  ['group by', P, 8, '', ''],
  ['severity >= warn group by', P, 25, '', ''],
  ['source:eu group by source group by actor', P, 26, 'group by actor', ''],
  ['source:eu group source', P, 16, 'source', ''],
  ['source:eu group', P, 15, '', ''],
  ['group by source AND severity >= warn', P, 16, 'AND severity >= warn', ''],
  ['group by payload.', P, 17, '', ''],
  // limits
  ['message:' + 'x'.repeat(4089), P, 4096, 'x', ''],
  ['('.repeat(33) + 'a:b' + ')'.repeat(33), P, 32, '(a:b' + ')'.repeat(16), ''],
  ['NOT '.repeat(33) + 'a:b', P, 128, 'NOT a:b', ''],
  ['message:"\ud800"', P, 9, '\ud800"', ''],
  // reserved fields
  ['org_id:abc', R, 0, 'org_id:abc', 'org_id'],
  ['PROJECT_ID == p1', R, 0, 'PROJECT_ID == p1', 'project_id'],
  ['severity >= warn AND `org_id` exists', R, 21, '`org_id` exists', 'org_id'],
  ['source:eu group by project_id', R, 19, 'project_id', 'project_id'],
  ['org_id.x:1', R, 0, 'org_id.x:1', 'org_id'],
  ['NOT Org_Id in (a)', R, 4, 'Org_Id in (a)', 'org_id'],
];

for (const [q, code, position, near, field] of TABLE) {
  test(q.length > 80 ? `${q.slice(0, 60)}… (${q.length} chars)` : q, () => {
    assert.throws(
      () => parseSoql(q),
      (err: unknown) => {
        assert.ok(err instanceof AppError, `not an AppError: ${String(err)}`);
        assert.deepEqual(
          { code: err.code, position: err.extra['position'], near: err.extra['near'], field: err.extra['field'] },
          { code, position, near, field },
          err.message,
        );
        assert.equal(err.status, 400);
        assert.ok(err.message.length > 10 && !/undefined|\[object/.test(err.message), err.message);
        return true;
      },
    );
  });
}

test('every refusal of the table points into its query: `near` is the query from `position`, at most 20 characters, "" at the end (SOQL.md "Errors")', () => {
  for (const [q] of TABLE) {
    const err = (() => {
      try {
        parseSoql(q);
      } catch (e) {
        return e as AppError;
      }
      assert.fail(`accepted: ${q}`);
    })();
    const position = err.extra['position'] as number;
    assert.ok(Number.isInteger(position) && position >= 0 && position <= q.length, `${q}: position ${position}`);
    assert.equal(err.extra['near'], q.slice(position, position + 20), q);
  }
});

test('messages read well', () => {
  const message = (q: string): string => {
    try {
      parseSoql(q);
    } catch (e) {
      return (e as Error).message;
    }
    return '';
  };
  assert.equal(message('severity >='), "expected a value after '>=', found the end of the query");
  assert.equal(message('source:"eu'), 'unclosed string starting here: add the closing "');
  assert.equal(message('(a:b'), "unclosed parenthesis starting here: add a ')'");
  assert.equal(message('source = eu'), "unknown operator '=': use :, !:, ==, !=, >, >=, < or <=");
  assert.equal(message('severity >= loud'), "unknown severity 'loud': use debug, info, warn, error or fatal");
  assert.match(message('ts >= banana'), /^'banana' is not a time: ts takes an ISO 8601 date-time/);
  assert.equal(message('org_id:x'), 'org_id is taken from your API token and cannot appear in a query');
  assert.equal(message('a:b group by x group by y'), "'group by' can appear only once");
});
