#!/usr/bin/env node
// Runs every *.test.ts under src/ with Node's test runner (Node 20 does not expand globs).
// Extra arguments are passed on: `npm test -- src/members` runs the tests under that path.
//
// The tests run transpiled, not through tsx: esbuild (the transpiler tsx itself uses, so the
// same JavaScript) writes src/ to dist-test/ in about a second, and each of the ~120 test
// processes then starts without tsx's loader hooks — about 0.8 s of CPU less per file, a
// fifth of the suite's CPU on this 2-core machine. dist-test/ mirrors src/ at the same depth,
// so paths a module finds from its own location (web/dist, scripts/) are the same. Type
// errors are `npm run typecheck`'s job, as under tsx. A single file still runs by hand with
// `node --import tsx --test src/….test.ts`.
import { buildTestTree } from './test-vendor.mjs';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';

//
// Files named *.long.test.ts run several real server processes and kill them (kill -9 mid-write,
// `serve --workers`, several hosts): a third of the suite's time. `npm test` leaves them out
// and says so; `npm run test:long` (--long) runs only them, `--all` everything, and a path given
// runs every test file under it. CI runs both (.ci/run).
const started = Date.now();
const loadAtStart = os.loadavg();
const args = process.argv.slice(2);
const only = args.includes('--long') ? 'long' : args.includes('--all') ? 'all' : undefined;
// --except=PATH (repeatable) leaves out the test files under PATH: a CI leg that runs everything
// but what another leg already ran the same way (.ci/run).
const excepted = args.filter((a) => a.startsWith('--except=')).map((a) => path.normalize(a.slice('--except='.length)));
const roots = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-') && a !== '--long' && a !== '--all' && !a.startsWith('--except='));
const isLong = (f) => f.endsWith('.long.test.ts');
let files = [];
const walk = (p) => {
  const stat = fs.statSync(p);
  if (stat.isDirectory()) for (const entry of fs.readdirSync(p)) walk(path.join(p, entry));
  else if (p.endsWith('.test.ts')) files.push(p);
};
for (const root of roots.length ? roots : ['src']) walk(root);
const longLeftOut = only === undefined && roots.length === 0 ? files.filter(isLong) : [];
if (only === 'long') files = files.filter(isLong);
else if (longLeftOut.length) files = files.filter((f) => !isLong(f));
if (excepted.length) files = files.filter((f) => !excepted.some((e) => f === e || f.startsWith(e + path.sep)));
files.sort();
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// The tests that spawn opsctl processes run the compiled CLI, and the browser tests the built
// dashboard: build what changed first (a no-op when nothing did), as `npm start` does.
const build = spawnSync(process.execPath, [fileURLToPath(new globalThis.URL('build-if-stale.mjs', import.meta.url))], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const sources = [];
const walkSources = (p) => {
  for (const entry of fs.readdirSync(p, { withFileTypes: true })) {
    const f = path.join(p, entry.name);
    if (entry.isDirectory()) walkSources(f);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(f);
  }
};
walkSources('src');
await buildTestTree(sources, 'dist-test');
// Longest first: with 3 files at a time, a long file started last would run on alone at the
// end. The times are the last run's (written below); on a fresh clone, the kinds
// known to be long (browsers, kill -9, several processes) go first.
//
// And waiting files between busy ones: a browser test spends most of its wall time waiting
// (keys typed 20–60 ms apart, pages loading: explorer.test.ts 61 s of wall for 16 s of CPU),
// and longest first started all of them together, so the run's first minutes used ~1 of the 2
// cores (the whole run 132% of a core, 326 s). Files that used less than half a core in the last
// run (or, on a fresh clone, the browser tests) alternate with the others, each list longest first.
const timesFile = 'dist-test/.file-times.json';
const knownTimes = (() => {
  try {
    return JSON.parse(fs.readFileSync(timesFile, 'utf8'));
  } catch {
    return {};
  }
})();
const known = (f) => (typeof knownTimes[f] === 'number' ? { wall: knownTimes[f] } : knownTimes[f]);
const expected = (f) => known(f)?.wall ?? (/browser\/|crash|multi-host|processes|events-node/.test(f) ? 40 : 5);
const waits = (f) => {
  const k = known(f);
  return k?.cpu !== undefined && k.wall > 0 ? k.cpu / k.wall < 0.5 : /browser\//.test(f);
};
const byTime = (list) => list.sort((a, b) => expected(b) - expected(a));
{
  const waiting = byTime(files.filter(waits));
  const busy = byTime(files.filter((f) => !waits(f)));
  files = [];
  while (waiting.length || busy.length) {
    if (waiting.length) files.push(waiting.shift());
    if (busy.length) files.push(busy.shift());
  }
}
const compiled = files.map((f) => path.join('dist-test', path.relative('src', f)).replace(/\.ts$/, '.js'));
// Each test process writes its wall and CPU time here as it exits (scripts/test-file-cost.mjs).
const costDir = path.join('dist-test', '.cost');
// Each skipped test as a line (scripts/skips-reporter.mjs): in CI (OPS_CI=1) any fails the run.
const skipsFile = path.join('dist-test', '.skipped.tsv');
fs.rmSync(skipsFile, { force: true });
fs.rmSync(costDir, { recursive: true, force: true });
fs.mkdirSync(costDir, { recursive: true });
const result = spawnSync(
  process.execPath,
  [
    // A test that hangs (a child that never answers) fails after 5 minutes instead of holding
    // the run until CI's limit; tests that need longer say so with their own `timeout`.
    // No optimizing compiler (TurboFan) in the test processes: they are short, so most of what it
    // compiled was thrown away at exit, 5% of the suite's CPU in a perf profile. Same-hour pairs
    // of runs: 3–4% less CPU on the query/engine/events files (property tests and fuzzing
    // included), 6–17% on the request-handling ones. Servers the tests spawn keep it.
    '--no-opt',
    '--enable-source-maps', '--test', `--test-concurrency=${process.env.OPS_TEST_CONCURRENCY ?? 3}`, '--test-timeout=300000',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter', fileURLToPath(new globalThis.URL('skips-reporter.mjs', import.meta.url)), '--test-reporter-destination', skipsFile,
    '--import', fileURLToPath(new globalThis.URL('test-file-cost.mjs', import.meta.url)),
    '--import', fileURLToPath(new globalThis.URL('test-children.mjs', import.meta.url)),
    ...flags, ...compiled,
  ],
  // As bin/opsctl.js's entry sets it for the server: the AWS SDK's Node 20 notice (src/cli/main.ts).
  // On Node 22.1+ (CI's Node 24 leg) V8's compiled code is also kept between processes and runs:
  // the same modules are compiled by every one of ~150 test processes. Node 20 has no such cache.
  { stdio: 'inherit', env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...compileCache(), ...process.env, OPS_TEST_COST_DIR: costDir } },
);
printCosts();
if (longLeftOut.length) {
  console.log(`\n${longLeftOut.length} long test files (several server processes, kill -9) were left out: \`npm run test:long\` runs them (CI does).`);
}
const skipped = fs.existsSync(skipsFile) ? fs.readFileSync(skipsFile, 'utf8').split('\n').filter(Boolean) : [];
if (skipped.length && process.env.OPS_CI === '1') {
  console.log(`\nFAILED: ${skipped.length} test(s) skipped, and nothing may skip in CI (src/test-support/ci.ts):`);
  for (const line of skipped) console.log(`  ${line.split('\t').join(' — ')}`);
  process.exit(1);
}
process.exit(result.status ?? 1);

function compileCache() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1) ? { NODE_COMPILE_CACHE: path.resolve('dist-test', '.compile-cache') } : {};
}

/**
 * The slowest files by wall time, each with its CPU time (its own process and the children it
 * waited for: servers, Chromium), then the whole run's: wall, CPU (this process and every
 * process it waited for, the build included) and the load average, which says how far the wall
 * times are to be trusted on a shared machine.
 */
function printCosts() {
  const rows = [];
  for (const name of fs.readdirSync(costDir)) {
    try {
      const row = JSON.parse(fs.readFileSync(path.join(costDir, name), 'utf8'));
      rows.push({ ...row, file: path.relative('dist-test', row.file).replace(/\.js$/, '.ts') });
    } catch {
      // a process that died while writing: its row is missing
    }
  }
  rows.sort((a, b) => b.wall - a.wall);
  try {
    const times = { ...knownTimes };
    for (const row of rows) times[path.join('src', row.file)] = { wall: Math.round(row.wall * 10) / 10, cpu: Math.round((row.cpu + row.children) * 10) / 10 };
    fs.writeFileSync(timesFile, JSON.stringify(times));
  } catch {
    // an ordering hint only
  }
  const shown = Number(process.env.OPS_TEST_SLOWEST ?? 15);
  const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
  console.log(`\nslowest test files (${rows.length} files; wall s, CPU s of the file's process + of the processes it waited for):`);
  for (const row of rows.slice(0, shown)) {
    console.log(`  ${row.wall.toFixed(1).padStart(6)}  ${(row.cpu + row.children).toFixed(1).padStart(6)} = ${row.cpu.toFixed(1).padStart(5)} + ${row.children.toFixed(1).padStart(5)}  src/${row.file}`);
  }
  let runCpu = '';
  try {
    // This process's own CPU and its waited-for children's (/proc/self/stat, clock ticks of 1/100 s).
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    runCpu = `, CPU ${((utime + cstime + stime + cutime) / 100).toFixed(0)} s (user ${((utime + cutime) / 100).toFixed(0)}, sys ${((stime + cstime) / 100).toFixed(0)})`;
  } catch {
    // not Linux
  }
  const load = (l) => l.map((x) => x.toFixed(1)).join(' ');
  console.log(`whole run: wall ${((Date.now() - started) / 1000).toFixed(0)} s${runCpu}; test files' CPU ${(sum('cpu') + sum('children')).toFixed(0)} s; load average ${load(loadAtStart)} at the start, ${load(os.loadavg())} at the end (${os.cpus().length} cores)`);
}
