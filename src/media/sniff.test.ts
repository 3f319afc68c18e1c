import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { normaliseType, sniff, supportedTypes } from './sniff.js';
import { samples } from '../test-support/media/test-files.js';
import { contentDisposition, newStorageKey, sanitiseName, storageKeyPattern } from './names.js';
import { parseRange } from './range.js';
import { decodeBase64Payload } from './base64.js';

describe('sniff', () => {
  for (const type of supportedTypes) {
    test(`a real ${type} file is detected as ${type}`, () => assert.equal(sniff(samples[type]()), type));
  }
  test('text, HEIF (ftyp heic), Matroska and empty input are none of the supported types', () => {
    assert.equal(sniff(Buffer.from('hello world')), undefined);
    assert.equal(sniff(Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic0000', 'latin1')])), undefined);
    assert.equal(sniff(Buffer.from('1a45dfa3a34286810142f7810142f2810442f3810842828888d6174726f736b61', 'hex')), undefined);
    assert.equal(sniff(Buffer.alloc(0)), undefined);
  });
  test('declared types are compared without case or parameters', () => assert.equal(normaliseType(' Image/PNG; q=1'), 'image/png'));
});

describe('names and keys', () => {
  test('a name with path, quotes, CR/LF and unicode becomes a safe segment', () => {
    assert.equal(sanitiseName('../../etc/passwd'), 'passwd');
    assert.equal(sanitiseName('C:\\x\\évil "name"\r\n.png'), 'evil-name-.png');
    assert.equal(sanitiseName('...'), 'file');
    assert.equal(sanitiseName('.htaccess'), 'htaccess');
  });
  test('keys carry 128 random bits and the sanitised name, and never repeat', () => {
    const a = newStorageKey('shot.png');
    assert.match(a, storageKeyPattern);
    assert.ok(a.endsWith('/shot.png'));
    assert.notEqual(a.split('/')[0], newStorageKey('shot.png').split('/')[0]);
  });
  test('Content-Disposition keeps raw quotes and newlines out of the header', () => {
    const value = contentDisposition('a"b\r\nc ü.pdf');
    assert.doesNotMatch(value, /[\r\n]/);
    assert.equal(value, `inline; filename="a-b-c-u.pdf"; filename*=UTF-8''a%22bc%20%C3%BC.pdf`);
  });
});

describe('parseRange', () => {
  const cases: Array<[string | undefined, ReturnType<typeof parseRange>]> = [
    [undefined, { kind: 'none' }],
    ['bytes=0-0', { kind: 'range', range: { start: 0, end: 0 } }],
    ['bytes=10-19', { kind: 'range', range: { start: 10, end: 19 } }],
    ['bytes=90-', { kind: 'range', range: { start: 90, end: 99 } }],
    ['bytes=-10', { kind: 'range', range: { start: 90, end: 99 } }],
    ['bytes=-500', { kind: 'range', range: { start: 0, end: 99 } }],
    ['bytes=50-5000', { kind: 'range', range: { start: 50, end: 99 } }],
    ['bytes=100-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=5-1', { kind: 'none' }],
    ['bytes=0-1,5-6', { kind: 'none' }],
    ['items=0-1', { kind: 'none' }],
  ];
  for (const [header, expected] of cases) test(`${header} of 100 bytes`, () => assert.deepEqual(parseRange(header, 100), expected));
});

describe('decodeBase64Payload', () => {
  test('plain base64, with whitespace and without padding', () => {
    assert.deepEqual(decodeBase64Payload('aGVs\nbG8=').bytes, Buffer.from('hello'));
    assert.deepEqual(decodeBase64Payload('aGVsbG8').bytes, Buffer.from('hello'));
  });
  test('a data: URL gives its media type', () => {
    const decoded = decodeBase64Payload('data:image/png;base64,aGVsbG8=');
    assert.equal(decoded.mediaType, 'image/png');
    assert.deepEqual(decoded.bytes, Buffer.from('hello'));
  });
  for (const bad of ['', 'a', 'ab$c', 'data:image/png,aGVsbG8=', 'aGVsbG8=aGVs']) {
    test(`"${bad}" is refused with 400`, () => assert.throws(() => decodeBase64Payload(bad), { code: 'bad_request' }));
  }
});
