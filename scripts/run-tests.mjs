#!/usr/bin/env node
// Runs every *.test.ts under src/ with Node's test runner (Node 20 does not expand globs).
// Extra arguments are passed on: `npm test -- src/members` runs the tests under that path.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const roots = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('-'));
const files = [];
const walk = (p) => {
  const stat = fs.statSync(p);
  if (stat.isDirectory()) for (const entry of fs.readdirSync(p)) walk(path.join(p, entry));
  else if (p.endsWith('.test.ts')) files.push(p);
};
for (const root of roots.length ? roots : ['src']) walk(root);
files.sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// The tests that spawn opsctl processes run the compiled CLI, and the browser tests the built
// dashboard: build what changed first (a no-op when nothing did), as `npm start` does.
const build = spawnSync(process.execPath, [fileURLToPath(new globalThis.URL('build-if-stale.mjs', import.meta.url))], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const result = spawnSync(
  process.execPath,
  [
    '--import', 'tsx', '--test', `--test-concurrency=${process.env.OPS_TEST_CONCURRENCY ?? 3}`,
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/test-file-times.mjs', '--test-reporter-destination=stderr',
    ...flags, ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
