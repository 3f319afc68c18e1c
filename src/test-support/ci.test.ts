import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// The rule that nothing skips in CI, run as CI runs it: a test file of its own under node's test
// runner with scripts/skips-reporter.mjs, once as on a developer's machine and once with OPS_CI=1.
const here = path.dirname(fileURLToPath(import.meta.url));
const helper = pathToFileURL(path.join(here, `ci${path.extname(fileURLToPath(import.meta.url))}`)).href;
const reporter = path.resolve(here, '../../scripts/skips-reporter.mjs');

function run(body: string, env: Record<string, string | undefined>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-ci-'));
  try {
    const file = path.join(dir, 'fixture.test.mjs');
    fs.writeFileSync(file, `import { test, describe } from 'node:test';\nimport { needs, onLeg } from ${JSON.stringify(helper)};\n${body}\n`);
    const skips = path.join(dir, 'skips.tsv');
    const child = spawnSync(
      process.execPath,
      // Run from source (node --import tsx), the fixture imports ci.ts and needs tsx too.
      [...(helper.endsWith('.ts') ? ['--import', 'tsx'] : []), '--test', '--test-reporter=tap', '--test-reporter-destination=stdout', '--test-reporter', reporter, '--test-reporter-destination', skips, file],
      { encoding: 'utf8', env: { ...process.env, NODE_TEST_CONTEXT: undefined, OPS_CI: undefined, ...env }, timeout: 60_000 },
    );
    const listed = fs.existsSync(skips) ? fs.readFileSync(skips, 'utf8').split('\n').filter(Boolean) : [];
    const count = (what: string) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(child.stdout)?.[1] ?? NaN);
    return { status: child.status, out: child.stdout + child.stderr, listed, pass: count('pass'), skipped: count('skipped'), tests: count('tests') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('the skips reporter lists every skipped or todo test with its reason, and nothing else', () => {
  const r = run(
    `test('runs', () => {});\ntest('skipped', { skip: 'no widget here' }, () => {});\ndescribe('todo suite', () => { test('later', { todo: 'not yet' }, () => {}); });`,
    {},
  );
  assert.equal(r.status, 0, r.out);
  assert.equal(r.listed.length, 2, r.listed.join('\n'));
  assert.match(r.listed[0]!, /\tskipped\tno widget here$/);
  assert.match(r.listed[1]!, /\tlater\tnot yet$/);
});

test('needs(): a missing requirement skips with its reason outside CI, and fails the file in CI', () => {
  const body = `describe('browser', needs('no Chromium at /nowhere'), () => { test('a page', () => {}); });\ntest('other', needs(false), () => {});`;
  const outside = run(body, {});
  assert.equal(outside.status, 0, outside.out);
  assert.equal(outside.pass, 1, outside.out);
  assert.ok(outside.listed.some((line) => line.endsWith('\tno Chromium at /nowhere')), outside.listed.join('\n'));

  const ci = run(body, { OPS_CI: '1' });
  assert.notEqual(ci.status, 0, 'the file fails in CI');
  assert.match(ci.out, /CI must provide what this test needs, and did not: no Chromium at \/nowhere/);
  assert.equal(ci.listed.length, 0, 'and nothing was skipped instead');
});

test("onLeg(): another leg's tests are skipped saying where they run outside CI, and not registered in CI; this leg's run", () => {
  const body = `const pg = onLeg(false, 'the PostgreSQL leg');\npg.test('only on PostgreSQL', () => { throw new Error('ran'); });\npg.describe('a PostgreSQL suite', { timeout: 1000 }, () => { test('inside', () => { throw new Error('ran'); }); });\nonLeg(true, 'this leg').test('here', () => {});`;
  const outside = run(body, {});
  assert.equal(outside.status, 0, outside.out);
  assert.equal(outside.pass, 1, outside.out);
  assert.deepEqual(outside.listed.map((line) => line.split('\t').slice(1)), [
    ['only on PostgreSQL', 'runs on the PostgreSQL leg'],
    ['a PostgreSQL suite', 'runs on the PostgreSQL leg'],
  ]);

  const ci = run(body, { OPS_CI: '1' });
  assert.equal(ci.status, 0, ci.out);
  assert.equal(ci.tests, 1, `only this leg's test is registered: ${ci.out}`);
  assert.equal(ci.skipped, 0);
  assert.deepEqual(ci.listed, []);
});
