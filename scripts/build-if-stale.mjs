#!/usr/bin/env node
// `npm start` compiles only when something changed: tsc takes ~10 s here, the server starts in 1.
// Stale means a source file, a tsconfig or the lock file is newer than the compiled entry point
// (tsc rewrites every output on each build, so the entry point's time is the build's).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { webAppStale } from './web-app-stale.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const output = path.join(root, 'dist/cli/main.js');
const mtime = (p) => fs.statSync(p).mtimeMs;

function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    // What tsconfig.build.json compiles: not the tests nor their support code.
    if (entry.isDirectory()) newest = entry.name === 'test-support' ? newest : Math.max(newest, newestSource(p));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.startsWith('test-')) newest = Math.max(newest, mtime(p));
  }
  return newest;
}

const inputs = Math.max(newestSource(path.join(root, 'src')), ...['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((f) => mtime(path.join(root, f))));
if (!fs.existsSync(output) || mtime(output) < inputs) {
  console.error('compiling (sources changed since the last build)…');
  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}
if (webAppStale(root)) {
  console.error('building the dashboard (web/ changed since the last build)…');
  const vite = spawnSync(process.execPath, [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', path.join(root, 'web/vite.config.ts'), '--logLevel', 'warn'], { stdio: 'inherit' });
  process.exit(vite.status ?? 1);
}
