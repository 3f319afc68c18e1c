import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

describe('group by a payload field of any JSON type', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    // payload.a as: object (two key orders), array, number, numeric string, boolean, string,
    // JSON null, missing; and a deeper object.
    const values: unknown[] = [
      { y: 1, x: 2 }, { y: 1, x: 2 }, { x: 2, y: 1 },
      [1, 2], [1, 2], [1, 2],
      5, 5, '5', true, 's', null, undefined,
      { deep: { er: [{ k: 'v' }] } },
    ];
    const events = values.map((a) => ({ event: 'g', payload: a === undefined ? { other: 1 } : { a } }));
    const r = await s.request('POST', '/datasets/types/ingest', { json: events });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.ingested, values.length, r.text);
  });
  after(() => s.close());

  const query = (q: string) => s.request('POST', '/query', { json: { q } });

  test('objects and arrays group by their JSON text (keys in the order sent); scalars keep their type; null and missing are one group', async () => {
    const r = await query('group by payload.a');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    // count desc; ties by the value's JSON text ('5' < '{' ; '"5"' < '"s"' < 'true' < '{'); null last
    assert.deepEqual(r.body, {
      field: 'payload.a',
      groups: [
        { value: [1, 2], count: 3 },
        { value: 5, count: 2 },
        { value: { y: 1, x: 2 }, count: 2 },
        { value: null, count: 2 },
        { value: '5', count: 1 },
        { value: 's', count: 1 },
        { value: true, count: 1 },
        { value: { deep: { er: [{ k: 'v' }] } }, count: 1 },
        { value: { x: 2, y: 1 }, count: 1 },
      ],
    });
    // an object comes back with its keys in the order the events sent them
    assert.ok(r.text.includes('{"value":{"y":1,"x":2},"count":2}'), r.text);
    assert.ok(r.text.includes('{"value":{"x":2,"y":1},"count":1}'), r.text);
  });

  test('a nested path into objects and arrays groups too', async () => {
    const r = await query('payload.a exists group by payload.a.deep');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.groups, [{ value: null, count: 12 }, { value: { er: [{ k: 'v' }] }, count: 1 }]);
  });

  test('the OpenAPI document allows objects and arrays as group values', async () => {
    const r = await s.request('GET', '/openapi.json');
    assert.equal(r.status, 200);
    const schema = JSON.stringify(r.body.paths['/v1/query'].post.responses['200']);
    assert.match(schema, /"type":"object"/);
    assert.match(schema, /"type":"array","items":\{\}/);
  });
});
