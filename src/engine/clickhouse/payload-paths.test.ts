import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { flattenPayload, maxJsonBytes, payloadType, topLevelTexts } from './payload-paths.js';
import { lookupPayload } from '../../soql/predicate.js';

const pointerToPath = (pointer: string): string[] => pointer.slice(1).split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));

test('topLevelTexts gives each top-level value its exact JSON text, for any object', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()), (object) => {
      const text = JSON.stringify(object);
      const expected = new Map(Object.entries(JSON.parse(text) as Record<string, unknown>).map(([k, v]) => [k, JSON.stringify(v)]));
      assert.deepEqual(topLevelTexts(text), expected);
    }),
    { numRuns: 500 },
  );
});

test('every flattened node is what predicate.ts finds at its path, with its type and JSON text', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })), (object) => {
      const text = JSON.stringify(object);
      const flat = flattenPayload(text);
      const root = JSON.parse(text) as unknown;
      flat.paths.forEach((pointer, i) => {
        const value = lookupPayload(root, pointerToPath(pointer));
        const type =
          typeof value === 'string' ? payloadType.string
          : typeof value === 'number' ? payloadType.number
          : typeof value === 'boolean' ? payloadType.boolean
          : value === null ? payloadType.null
          : Array.isArray(value) ? payloadType.array
          : payloadType.object;
        assert.equal(flat.types[i], type, pointer);
        assert.equal(flat.json[i], JSON.stringify(value), pointer);
        if (type === payloadType.string) assert.equal(flat.text[i], value);
        if (type === payloadType.number) assert.equal(flat.numbers[i], value);
      });
      // And every path predicate.ts can reach is there.
      assert.equal(new Set(flat.paths).size, flat.paths.length);
    }),
    { numRuns: 500 },
  );
});

test('bounded: legacy payloads nested thousands deep or megabytes wide flatten without blowing up', () => {
  const deep = `{"top":"t",${'"a":{'.repeat(3_000)}"leaf":1${'}'.repeat(3_000)}}`;
  const flat = flattenPayload(deep);
  assert.ok(flat.paths.length <= 70, String(flat.paths.length));
  assert.equal(flat.json[flat.paths.indexOf('/a')], deep.slice(deep.indexOf('{"a"', 1), -1), 'the top-level value keeps its whole text');
  const arrays = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
  const flatArrays = flattenPayload(arrays);
  assert.equal(flatArrays.json[0], arrays.slice(5, -1));
  const wide = JSON.stringify({ big: Array.from({ length: 2_000 }, (_, i) => ({ i, pad: 'x'.repeat(100) })) });
  const flatWide = flattenPayload(wide);
  const stored = flatWide.json.reduce((n, j) => n + j.length, 0);
  // The top-level text once, each leaf's text once, nested containers within the budget.
  assert.ok(stored <= 2 * wide.length + maxJsonBytes, `stored ${stored} for ${wide.length}`);
});

test('a payload DuckDB cannot read (an escaped lone surrogate) flattens to nothing, as predicate.ts reads it', () => {
  assert.deepEqual(flattenPayload('{"a":"\\ud800"}').paths, []);
});
