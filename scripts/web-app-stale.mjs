// Whether dist/web (the dashboard, `npm run build:web`) is older than what it is built from:
// web/ (sources, config, index.html) and the lock file. Shared by `npm start` and the browser tests.
import fs from 'node:fs';
import path from 'node:path';

function newest(p) {
  const stat = fs.statSync(p);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...fs.readdirSync(p).map((e) => newest(path.join(p, e))));
}

export function webAppStale(root) {
  const built = path.join(root, 'dist/web/index.html');
  if (!fs.existsSync(built)) return true;
  const inputs = Math.max(newest(path.join(root, 'web')), fs.statSync(path.join(root, 'package-lock.json')).mtimeMs);
  return fs.statSync(built).mtimeMs < inputs;
}
