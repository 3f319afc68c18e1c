import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The dependency check of `npm run lint` (scripts/check-dependencies.mjs, docs/architecture.md),
// run over two small trees with the project's layers: one whose imports all point down passes,
// one with a cycle between files, a cycle between folders and an import into a higher layer fails
// and names each.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const check = (fixture: string) => {
  const child = spawnSync(process.execPath, [path.join(root, 'scripts/check-dependencies.mjs'), path.join(root, 'scripts/dependency-fixtures', fixture)], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: child.status, out: child.stdout + child.stderr };
};

test('a tree whose imports all point down passes the dependency check', () => {
  const { status, out } = check('clean');
  assert.equal(status, 0, out);
  assert.match(out, /no cycle, every import points down/);
});

test('a cycle between files, a cycle between folders and an import into a higher layer each fail the dependency check', () => {
  const { status, out } = check('cycles');
  assert.equal(status, 1, out);
  assert.match(out, /no-circular: src\/shared\/a\.ts → src\/shared\/b\.ts → src\/shared\/a\.ts/);
  assert.match(out, /folders: a cycle between src\/media\/, src\/events\/|folders: a cycle between src\/events\/, src\/media\//);
  assert.match(out, /layers: src\/config\/config\.ts → src\/media\/file\.ts/);
  assert.match(out, /3 problem\(s\)/);
});
