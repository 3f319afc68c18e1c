import fs from 'node:fs';
import path from 'node:path';
import { EventStoreLockedError } from '../event-store.js';

/**
 * One process owns an events directory (its write-ahead log). DuckDB's file lock gives that for
 * the embedded engine; an engine on a server (ClickHouse) takes this lock instead: a file
 * holding the owner's pid, created exclusively. A file left by a process that is gone (kill -9)
 * is taken over; the same process may take it again (its events worker restarting).
 */
export function lockEventsDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'events.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => release(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(fs.readFileSync(file, 'utf8').trim());
    if (owner === process.pid) return () => release(file);
    if (Number.isInteger(owner) && owner > 0 && alive(owner)) throw new EventStoreLockedError(file, new Error(`held by process ${owner}`));
    fs.rmSync(file, { force: true }); // its owner is gone
  }
  throw new EventStoreLockedError(file, new Error('could not take the lock'));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function release(file: string): void {
  try {
    if (Number(fs.readFileSync(file, 'utf8').trim()) === process.pid) fs.rmSync(file, { force: true });
  } catch {
    // already gone
  }
}
