import fs from 'node:fs';
import path from 'node:path';

/**
 * The data directory holds token hashes, e-mail addresses, the cursor-signing key and every
 * tenant's files and events: no other user of the machine may read it. The directory is
 * created (or tightened) to 0700, and the process's umask makes every file and folder the
 * stores create beneath it 0600 / 0700 — SQLite's -wal and -shm, DuckDB's files, blobs and
 * temporary uploads alike, whichever library opens them.
 */
export function preparePrivateDataDir(dataDir: string): void {
  process.umask(0o077);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  tighten(dataDir, 0o700);
  // Installations made before this rule: their top-level files were created 0644.
  for (const entry of fs.readdirSync(dataDir, { withFileTypes: true })) {
    if (entry.isFile()) tighten(path.join(dataDir, entry.name), 0o600);
  }
}

function tighten(target: string, mode: number): void {
  try {
    if ((fs.statSync(target).mode & 0o777) !== mode) fs.chmodSync(target, mode);
  } catch (error) {
    // A directory we may use but do not own (a mounted volume): leave its mode to its owner.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  }
}
