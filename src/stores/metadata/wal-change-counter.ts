import fs from 'node:fs';
import type SQLite from 'better-sqlite3';

/** The wal-index format SQLite has written since 3.7.0 (walformat.html, "The WAL-Index Header"). */
const walIndexVersion = 3007000;
/** The first copy of the header: iVersion, iChange, mxFrame, nPage, salts and checksums. */
const headerBytes = 48;
/** iChange, the header's count of commits (after iVersion and an unused word; native byte order, little-endian here). */
const iChangeOffset = 8;

export interface ChangeCounter {
  read(): number;
  /**
   * Runs a write statement of this process's own connection, outside any transaction, without
   * counting its commit: the caller knows what it wrote (database.ts: the usage counters, which
   * no cached read reads). Any other commit, before or during it, is counted as ever.
   */
  runOwn(run: () => { changes: number }): { changes: number };
  close(): void;
}

/**
 * A number that moves whenever any connection, in this process or another (opsctl, a second
 * server), commits to a SQLite database in WAL mode; ReadMostlyCache's half of the stamp for
 * other connections' writes.
 *
 * `PRAGMA data_version` answers the same question but opens and closes a read transaction to do
 * it: two fcntl calls (strace), ~3.4 µs of CPU per request under load (perf, bench:http). A commit is
 * published by rewriting the wal-index header in the `-shm` file, which every connection maps
 * shared; one pread of those 48 bytes sees it (the page cache is the mapping). The header holds
 * a counter bumped on every commit and checkpoint restart, so a commit always changes it. A
 * header read in the middle of a commit either differs (the cache reads afresh, harmlessly) or is
 * still the old one (the commit has not finished, so a fresh read could not see it either).
 *
 * The server's connection stays open for the life of the process and holds the `-shm` file's
 * lock, so SQLite never deletes and recreates the file under this descriptor. Where the file is
 * missing or its format is not the one described above, `PRAGMA data_version` is used instead.
 */
export function walChangeCounter(database: SQLite.Database, file: string): ChangeCounter {
  const dataVersion = database.prepare('PRAGMA data_version').pluck();
  // data_version does not move for this connection's own commits: nothing to leave out.
  const pragma: ChangeCounter = { read: () => dataVersion.get() as number, runOwn: (run) => run(), close: () => {} };
  // A read makes sure the wal-index exists and is initialised before its header is trusted.
  pragma.read();
  let fd: number;
  try {
    fd = fs.openSync(`${file}-shm`, 'r');
  } catch {
    return pragma;
  }
  let seen = Buffer.alloc(headerBytes);
  let next = Buffer.alloc(headerBytes);
  if (fs.readSync(fd, seen, 0, headerBytes, 0) !== headerBytes || seen.readUInt32LE(0) !== walIndexVersion) {
    fs.closeSync(fd);
    return pragma;
  }
  let changes = 0;
  const read = (): number => {
    fs.readSync(fd, next, 0, headerBytes, 0);
    if (!next.equals(seen)) {
      changes++;
      [seen, next] = [next, seen];
    }
    return changes;
  };
  return {
    read,
    runOwn(run) {
      // Whatever was committed before is counted first; `seen` is then the header just before
      // the statement. Its iChange moves by exactly one per commit (wal.c, walFrames), a
      // checkpoint's restart included, so if the statement changed rows in autocommit (it
      // committed) and the counter moved by one, that one commit was this statement's.
      read();
      const before = seen.readUInt32LE(iChangeOffset);
      let result: { changes: number };
      try {
        result = run();
      } catch (error) {
        read();
        throw error;
      }
      fs.readSync(fd, next, 0, headerBytes, 0);
      if (!next.equals(seen)) {
        if (!(result.changes > 0 && next.readUInt32LE(iChangeOffset) === ((before + 1) >>> 0))) changes++;
        [seen, next] = [next, seen];
      }
      return result;
    },
    close: () => fs.closeSync(fd),
  };
}

/**
 * `read`'s answer shared by every caller until the synchronous code running now ends (the next
 * `process.nextTick` turn) or `epoch` moves: the token cache and a read-mostly read of one
 * request each asked for the stamp, two preads where one answers both (~9% of a members
 * request's CPU under load was these preads).
 *
 * Why a shared answer is never staler than a fresh one for what uses it: the code that runs
 * before the next tick turn (or, when taken during a microtask drain, before that drain ends)
 * serves only requests whose bytes were read from their sockets before it started, so before the
 * shared read; serving them as of that read is what reading again would have done had they been
 * handled a moment sooner. What could have seen a later commit meanwhile is a statement on a
 * connection of this process (`epoch` counts them: database.ts) or a message from another
 * process (the bus), which arrives in a later turn of the event loop, after the tick queue ran.
 */
export function sharedUntilNextTick(read: () => number, epoch: () => number): () => number {
  let shared: number | undefined;
  let sharedAt = 0;
  const forget = (): void => {
    shared = undefined;
  };
  return () => {
    const now = epoch();
    if (shared === undefined || sharedAt !== now) {
      if (shared === undefined) process.nextTick(forget);
      shared = read();
      sharedAt = now;
    }
    return shared;
  };
}
