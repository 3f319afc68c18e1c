// A reporter for Node's test runner (scripts/run-tests.mjs adds it beside `spec`): at the end of a
// run it prints the slowest test files, each with the time its top-level tests and suites took
// (what the file's own process measured; its start-up, tsx compiling included, is not in it), so
// the files worth speeding up are named on every run rather than found by hand.
import fs from 'node:fs';

const shown = Number(process.env.OPS_TEST_SLOWEST ?? 12);
/** Each file's time of the last run that ran it: scripts/run-tests.mjs starts the longest first. */
export const timesFile = 'dist-test/.file-times.json';

export default async function* fileTimes(source) {
  const files = new Map();
  const started = Date.now();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (!file || nesting !== 0) continue;
    files.set(file, (files.get(file) ?? 0) + (details?.duration_ms ?? 0));
  }
  const rows = [...files].map(([file, ms]) => ({ file: file.replace(process.cwd() + '/', ''), seconds: ms / 1000 }));
  rows.sort((a, b) => b.seconds - a.seconds);
  try {
    let known = {};
    try {
      known = JSON.parse(fs.readFileSync(timesFile, 'utf8'));
    } catch {
      // first run here
    }
    for (const row of rows) known[row.file] = Math.round(row.seconds * 10) / 10;
    fs.writeFileSync(timesFile, JSON.stringify(known));
  } catch {
    // an ordering hint only
  }
  const total = (Date.now() - started) / 1000;
  const inTests = rows.reduce((sum, row) => sum + row.seconds, 0);
  yield `\nslowest test files (time in their tests; ${rows.length} files, ${inTests.toFixed(0)} s in tests, ${total.toFixed(0)} s wall):\n`;
  for (const row of rows.slice(0, shown)) yield `  ${row.seconds.toFixed(1).padStart(6)} s  ${row.file}\n`;
}
