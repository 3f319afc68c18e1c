#!/usr/bin/env node
// `npm start` compiles only when something changed: tsc takes ~10 s here, the server starts in 1.
// Stale: scripts/server-dist-stale.mjs and scripts/web-app-stale.mjs. `npm test` runs it too, so
// the tests that spawn opsctl processes start the compiled CLI (a third of tsx's start-up CPU).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { serverDistStale } from './server-dist-stale.mjs';
import { webAppStale } from './web-app-stale.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (serverDistStale(root)) {
  console.error('compiling (sources changed since the last build)…');
  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}
if (webAppStale(root)) {
  console.error('building the dashboard (web/ changed since the last build)…');
  const vite = spawnSync(process.execPath, [path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', path.join(root, 'web/vite.config.ts'), '--logLevel', 'warn'], { stdio: 'inherit' });
  process.exit(vite.status ?? 1);
}
