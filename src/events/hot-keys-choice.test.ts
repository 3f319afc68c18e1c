/**
 * chooseHotKeys over discovery's samples (a pure choice; hot-keys.test.ts holds it over HTTP):
 * identifier-like strings are not chosen by discovery alone, and an automatic key already hot is
 * dropped only well past the line, so a key near it does not flap from one sample to the next.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FieldStats, FrequentKey } from '../engine/event-store.js';
import { chooseHotKeys, type HotKeyEntry } from './hot-keys.js';

const sample = (...frequent: FrequentKey[]): FieldStats => ({ fields: [], sampledEvents: 100, truncated: false, frequent });
const key = (name: string, type: FrequentKey['type'], distinct?: number): FrequentKey => ({ key: name, path: [name], type, count: 100, distinct });
const names = (keys: HotKeyEntry[]) => keys.map((k) => `${k.path.join('.')}${k.pinned ? '*' : ''}`);

test('discovery chooses strings of few distinct values, numbers and booleans; not identifier-like strings', () => {
  const stats = sample(key('map', 'string', 7), key('player_id', 'string', 98), key('ping', 'number', 100), key('ranked', 'boolean', 2), key('half', 'string', 50), key('more', 'string', 51), key('unknown', 'string'));
  assert.deepEqual(names(chooseHotKeys([], stats)), ['map', 'ping', 'ranked', 'half', 'unknown']);
});

test('an automatic key already hot stays until the sample shows it well past the line; pins and used keys stay whatever it shows', () => {
  const current: HotKeyEntry[] = [
    { path: ['session'], type: 'string', pinned: false },
    { path: ['request_id'], type: 'string', pinned: false },
    { path: ['player_id'], type: 'string', pinned: true },
    { path: ['steam_id'], type: 'string', pinned: false },
  ];
  const stats = sample(key('session', 'string', 70), key('request_id', 'string', 80), key('player_id', 'string', 100), key('steam_id', 'string', 100));
  assert.deepEqual(names(chooseHotKeys(current, stats, undefined, [{ path: ['steam_id'], count: 3 }])), ['player_id*', 'session', 'steam_id']);
});
