import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PlanCatalogue } from './catalogue.js';

const write = (content: unknown) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'plans-')), 'plans.json');
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
};

test('the default catalogue is DECISIONS.md §8, cheapest first; pro is the first with live tail', () => {
  const plans = PlanCatalogue.load(undefined);
  assert.deepEqual(plans.names(), ['free', 'starter', 'pro', 'enterprise']);
  assert.equal(plans.limits('starter').max_file_bytes, 50_000_000);
  assert.equal(plans.limits('enterprise').queries_month, null);
  assert.equal(plans.firstWithLiveTail(), 'pro');
});

test('OPS_PLANS_FILE replaces and adds plans', () => {
  const limits = { max_file_bytes: 5, storage_bytes: 100, datasets: 1, retention_days: 1, live_tail: true, events_month: null, queries_month: 3 };
  const plans = PlanCatalogue.load(write({ plans: { free: limits, studio: { ...limits, datasets: 20 } } }));
  assert.deepEqual(plans.names(), ['free', 'starter', 'pro', 'enterprise', 'studio']);
  assert.equal(plans.limits('free').max_file_bytes, 5);
  assert.equal(plans.firstWithLiveTail(), 'free');
});

test('monitors per plan (DECISIONS.md §18); a plans file without `monitors` keeps the default of that name, else 3', () => {
  const defaults = PlanCatalogue.load(undefined);
  assert.deepEqual(['free', 'starter', 'pro', 'enterprise'].map((p) => defaults.limits(p).monitors), [3, 20, 100, 1000]);
  const limits = { max_file_bytes: 5, storage_bytes: 100, datasets: 1, retention_days: 1, live_tail: true, events_month: null, queries_month: 3 };
  const plans = PlanCatalogue.load(write({ plans: { pro: limits, studio: limits, big: { ...limits, monitors: null }, two: { ...limits, monitors: 2 } } }));
  assert.equal(plans.limits('pro').monitors, 100);
  assert.equal(plans.limits('studio').monitors, 3);
  assert.equal(plans.limits('big').monitors, null);
  assert.equal(plans.limits('two').monitors, 2);
  assert.throws(() => PlanCatalogue.load(write({ plans: { x: { ...limits, monitors: -1 } } })), /OPS_PLANS_FILE: \/plans\/x/);
});

test('a bad plans file is refused with a message naming OPS_PLANS_FILE and the bad field', () => {
  assert.throws(() => PlanCatalogue.load(write('{not json')), /OPS_PLANS_FILE: cannot read/);
  assert.throws(() => PlanCatalogue.load(write({ plans: { x: { max_file_bytes: 'big' } } })), /OPS_PLANS_FILE: \/plans\/x/);
});
