import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bulkAnswer } from './answers.js';

/** The definition: the answer as JSON text, item by item (what the route wrote before it wrote bytes). */
function answerText(items: Parameters<typeof bulkAnswer>[0], eventIds: ReadonlyArray<string | undefined>, took: number): string {
  const created = '"_version":1,"result":"created","_shards":{"total":1,"successful":1,"failed":0},"_seq_no":0,"_primary_term":1,"status":201}}';
  let errors = false;
  const answered = items.map((item, i) => {
    const id = item.id ?? eventIds[i];
    const head = `{${JSON.stringify(item.action)}:{"_index":${JSON.stringify(item.index)},"_id":${id === undefined ? 'null' : JSON.stringify(id)},`;
    if (!item.error) return `${head}${created}`;
    errors = true;
    return `${head}"status":${item.error.status},"error":{"type":${JSON.stringify(item.error.type)},"reason":${JSON.stringify(item.error.reason)}}}}`;
  });
  return `{"took":${took},"errors":${errors},"items":[${answered.join(',')}]}`;
}

// Any text, lone surrogates and controls included, and the texts that look like JSON's own words.
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', 'null', '"', '\\', 'é', '\u2028', '\ud800', 'create', 'bench-es'));
const item = fc.record({
  action: fc.oneof(fc.constantFrom('index', 'create', 'update', 'delete'), text),
  index: fc.oneof(fc.constantFrom('games', 'logs-2026.11.26', ''), text),
  id: fc.option(text, { nil: undefined }),
  error: fc.option(fc.record({ status: fc.constantFrom(400, 409, 413), type: fc.oneof(fc.constantFrom('document_parsing_exception'), text), reason: text }), { nil: undefined }),
});

describe('the bulk answer', () => {
  test('is the bytes of its JSON text, whatever the actions, indexes, ids and errors', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 20 }), fc.array(fc.option(fc.oneof(fc.uuid(), text), { nil: undefined }), { maxLength: 20 }), fc.nat(100_000), (items, eventIds, took) => {
        const bytes = bulkAnswer(items, eventIds, took);
        assert.equal(bytes.toString('utf8'), answerText(items, eventIds, took));
        assert.deepEqual(bytes, Buffer.from(answerText(items, eventIds, took)));
        JSON.parse(bytes.toString('utf8'));
      }),
      { numRuns: 500 },
    );
  });

  test('the same bytes when every item is stored under one action and index with ids of one length (written by one fill)', () => {
    const id = fc.oneof(fc.uuid(), fc.string({ minLength: 3, maxLength: 3 }), fc.string({ unit: 'binary', minLength: 3, maxLength: 3 }), fc.constantFrom('a"b', 'a\\b', 'é12', '\u0001ab'));
    fc.assert(
      fc.property(fc.constantFrom('create', 'index', 'é'), fc.oneof(fc.constantFrom('games', ''), text), fc.array(fc.record({ own: fc.option(id, { nil: undefined }), event: id }), { minLength: 1, maxLength: 20 }), fc.nat(100_000), (action, index, ids, took) => {
        // Ids of one length in most runs: a UUID each, or three characters each.
        const length = ids[0]!.event.length;
        const same = ids.filter((i) => i.event.length === length && (i.own === undefined || i.own.length === length));
        const items = same.map((i) => ({ action, index, id: i.own }));
        const eventIds = same.map((i) => i.event);
        assert.equal(bulkAnswer(items, eventIds, took).toString('utf8'), answerText(items, eventIds, took));
      }),
      { numRuns: 1_000 },
    );
  });

  test('1,000 stored items of one index: each with its event id, errors false', () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => `0194c2a0-0000-7000-8000-${String(i).padStart(12, '0')}`);
    const answer = JSON.parse(bulkAnswer(ids.map(() => ({ action: 'create', index: 'games', id: undefined })), ids, 7).toString()) as {
      took: number;
      errors: boolean;
      items: Array<{ create: { _id: string; status: number } }>;
    };
    assert.equal(answer.took, 7);
    assert.equal(answer.errors, false);
    assert.deepEqual(answer.items.map((i) => i.create._id), ids);
    assert.ok(answer.items.every((i) => i.create.status === 201));
  });
});
