// The explorer editor's completions (web/src/pages/explorer/soql-complete.ts): what is offered
// where, and that taking an offer writes SOQL the server's own parser reads.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EditorState } from '@codemirror/state';
import { parseSoql } from '../soql/index.js';
import { tsImport } from 'tsx/esm/api';
import type { Vocabulary } from '../../web/src/pages/explorer/soql-complete.js';

// web/src is TypeScript outside src/ (which `npm test` runs transpiled into dist-test/): loaded through tsx.
const { optionsAt } = (await tsImport('../../web/src/pages/explorer/soql-complete.ts', import.meta.url)) as typeof import('../../web/src/pages/explorer/soql-complete.js');

const vocabulary: Vocabulary = { payloadKeys: ['payload.`odd key`', 'payload.map', 'payload.nested.map'], datasets: ['game', 'gateway'] };

/** The labels offered with the cursor at the end of `text`. */
function offered(text: string, explicit = false): string[] {
  const open = optionsAt(EditorState.create({ doc: text }), text.length, vocabulary, explicit);
  return open ? open.options.map((o) => o.label) : [];
}

/** `text` with the offer `label` taken at its end. */
function taking(text: string, label: string): string {
  const open = optionsAt(EditorState.create({ doc: text }), text.length, vocabulary);
  const option = open?.options.find((o) => o.label === label);
  assert.ok(open && option, `${label} offered after ${JSON.stringify(text)}`);
  return text.slice(0, open.from) + option.apply + text.slice(open.to);
}

describe('SOQL completions', () => {
  test('fields, keywords and payload keys as the word begins; nothing before a word unless asked', () => {
    assert.deepEqual(offered('s'), ['stats', 'severity', 'source']);
    assert.deepEqual(offered('source:eu AND p'), ['payload.`odd key`', 'payload.map', 'payload.nested.map']);
    assert.deepEqual(offered('payload.n'), ['payload.nested.map']);
    assert.deepEqual(offered('a'), ['AND', 'actor']);
    assert.deepEqual(offered(''), []);
    assert.deepEqual(offered('source:eu AND '), []);
    assert.equal(offered('', true).length, 12);
    // What is typed already is not offered again.
    assert.deepEqual(offered('severity'), []);
    assert.deepEqual(offered('payload.map'), []);
  });

  test('operators after a field and a space; severities and datasets after their operator', () => {
    assert.deepEqual(offered('severity '), [':', '!:', '>=', '>', '<=', '<', '==', '!=', 'exists', 'in (']);
    assert.deepEqual(offered('payload.`odd key` !'), ['!:', '!=']);
    assert.deepEqual(offered('source e'), ['exists']);
    assert.deepEqual(offered('severity >= '), ['debug', 'info', 'warn', 'error', 'fatal']);
    assert.deepEqual(offered('severity >= w'), ['warn']);
    assert.deepEqual(offered('severity:e'), ['error']);
    assert.deepEqual(offered('dataset:ga'), ['game', 'gateway']);
    // A value is no field (`message: source`), and other fields' values are open-ended.
    assert.deepEqual(offered('message: source '), []);
    assert.deepEqual(offered('source:'), []);
    assert.deepEqual(offered('warn AND nothing '), []);
  });

  test('nothing inside a string or a backquoted key; stats functions after stats', () => {
    assert.deepEqual(offered('message:"sev'), []);
    assert.deepEqual(offered('payload.`sev'), []);
    assert.deepEqual(offered('message:"a \\" b" AND sev'), ['severity']);
    assert.deepEqual(offered('stats co'), ['count(', 'count_distinct(']);
    assert.deepEqual(offered('co'), []);
  });

  test('taking offers writes queries the server parses', () => {
    let q = taking('sev', 'severity');
    q = taking(`${q} `, '>=');
    q = taking(q, 'warn');
    q = taking(`${q} A`, 'AND');
    q = taking(`${q}payload.n`, 'payload.nested.map');
    q = taking(`${q} `, ':');
    q = `${q}map-1 `;
    q = taking(`${q}A`, 'AND');
    q = taking(`${q}dataset:g`, 'game');
    assert.equal(q, 'severity >= warn AND payload.nested.map : map-1 AND dataset:game');
    parseSoql(q);
    for (const op of [':', '!:', '>=', '>', '<=', '<', '==', '!=']) parseSoql(taking('source ', op) + 'x');
    parseSoql(taking('payload.map ', 'exists'));
    parseSoql(`${taking('dataset ', 'in (')}game, gateway)`);
    parseSoql(`${taking('stats co', 'count(')}) by source`);
    parseSoql(`${taking('source:eu gr', 'group by')}source`);
  });
});
