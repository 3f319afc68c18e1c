// Whether dist/ (the compiled server and CLI, `npm run build`) is older than what it is built
// from: src/ less the tests and their support code, the tsconfigs and the lock file (tsc rewrites
// every output on each build, so the entry point's time is the build's). Shared by `npm start`,
// `npm test` and the tests that spawn `opsctl` processes.
import fs from 'node:fs';
import path from 'node:path';

function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    // What tsconfig.build.json compiles: not the tests nor their support code.
    if (entry.isDirectory()) newest = entry.name === 'test-support' ? newest : Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.startsWith('test-')) newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** The compiled CLI's entry point, which every compiled process starts from. */
export const compiledCli = (root) => path.join(root, 'dist/cli/main.js');

export function serverDistStale(root) {
  const output = compiledCli(root);
  if (!fs.existsSync(output)) return true;
  const inputs = Math.max(newestSource(path.join(root, 'src')), ...['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((f) => fs.statSync(path.join(root, f)).mtimeMs));
  return fs.statSync(output).mtimeMs < inputs;
}
