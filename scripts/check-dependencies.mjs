#!/usr/bin/env node
// The dependency check of `npm run lint`: cruises src/ with .dependency-cruiser.cjs (a cycle
// between files, an import into a higher layer) and then, from the same cruise, finds the cycles
// between src/'s top-level folders, which dependency-cruiser does not check. The dependencies
// listed in scripts/dependency-layers.cjs are let off, and one that no longer matches anything
// fails the check so the list cannot go stale.
//
// `node scripts/check-dependencies.mjs [ROOT]` checks ROOT/src with ROOT's tsconfig.json (default
// the project; src/test-support/dependency-check.test.ts runs it over small fixtures).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const project = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.resolve(process.argv[2] ?? project);
const require = createRequire(import.meta.url);
const config = require(path.join(project, '.dependency-cruiser.cjs'));
const { layers, testCode, exceptions } = require(path.join(project, 'scripts/dependency-layers.cjs'));
// The project's exceptions are about the project's files: a fixture is checked without them.
const letOff = root === project ? exceptions : [];

process.chdir(root);
const result = await cruise(['src'], { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } }, undefined, {
  tsConfig: extractTSConfig(path.join(root, 'tsconfig.json')),
});
const { modules } = result.output;

const isTest = (file) => new RegExp(testCode).test(file);
const used = new Set();
const isLetOff = (rule, from, to) => {
  const i = letOff.findIndex((e) => e.rule === rule && new RegExp(e.from).test(from) && new RegExp(e.to).test(to));
  if (i >= 0) used.add(i);
  return i >= 0;
};
const problems = [];

for (const v of result.output.summary.violations) {
  const at = v.cycle ? v.cycle.map((c) => c.name ?? c) : [v.from, v.to];
  // A cycle is let off when one of its steps is.
  const steps = v.cycle ? [v.from, ...at].map((f, i, all) => [f, all[i + 1]]).slice(0, -1) : [[v.from, v.to]];
  if (steps.some(([from, to]) => isLetOff(v.rule.name, from, to))) continue;
  problems.push(`${v.rule.name}: ${v.from} → ${v.cycle ? at.join(' → ') : v.to}`);
}

// Every top-level folder has its place in a layer.
const folderOf = (file) => (/^src\/[^/]+$/.test(file) ? '.' : file.split('/')[1]);
const placed = new Set(layers.flatMap((l) => l.folders));
for (const folder of new Set(modules.filter((m) => m.source.startsWith('src/') && !isTest(m.source)).map((m) => folderOf(m.source)))) {
  if (!placed.has(folder)) problems.push(`layers: src/${folder}/ is in no layer (scripts/dependency-layers.cjs)`);
}

// Cycles between top-level folders, over production code only: Tarjan's strongly connected
// components of the folder graph, each edge shown with one import that makes it.
const edges = new Map();
for (const m of modules) {
  if (!m.source.startsWith('src/') || isTest(m.source)) continue;
  for (const d of m.dependencies) {
    if (!d.resolved.startsWith('src/') || isTest(d.resolved)) continue;
    const a = folderOf(m.source);
    const b = folderOf(d.resolved);
    if (a === b || isLetOff('folders', m.source, d.resolved)) continue;
    if (!edges.has(a)) edges.set(a, new Map());
    if (!edges.get(a).has(b)) edges.get(a).set(b, `${m.source} → ${d.resolved}`);
  }
}
const index = new Map();
const low = new Map();
const stack = [];
const components = [];
const visit = (v) => {
  index.set(v, index.size);
  low.set(v, index.get(v));
  stack.push(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (stack.includes(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = stack.splice(stack.indexOf(v));
    if (component.length > 1) components.push(component);
  }
};
for (const v of edges.keys()) if (!index.has(v)) visit(v);
for (const component of components) {
  const inside = new Set(component);
  const why = component.flatMap((a) => [...(edges.get(a) ?? [])].filter(([b]) => inside.has(b)).map(([, imp]) => `    ${imp}`));
  problems.push(`folders: a cycle between ${component.map((f) => `src/${f}/`).join(', ')}:\n${why.join('\n')}`);
}

letOff.forEach((e, i) => {
  if (!used.has(i)) problems.push(`stale exception (matches nothing, remove it from scripts/dependency-layers.cjs): ${e.rule} ${e.from} → ${e.to}`);
});

if (problems.length) {
  console.error(`dependency check: ${problems.length} problem(s) (docs/architecture.md)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`dependency check: ${modules.length} modules, no cycle, every import points down (${letOff.length} exception(s) listed)`);
