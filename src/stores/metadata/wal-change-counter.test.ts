import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sharedUntilNextTick, walChangeCounter } from './wal-change-counter.js';

const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wal-counter-')), 'db.sqlite');

function openWal(file: string): SQLite.Database {
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  return database;
}

/** A write by another process, as opsctl makes one beside the server; resolves once it has exited. */
function writeFromAnotherProcess(file: string, value: number): Promise<void> {
  const script = `const db = new (require('better-sqlite3'))(process.argv[1]); db.prepare('insert into t values (?)').run(Number(process.argv[2])); db.close();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, file, String(value)], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited with ${code}`))));
  });
}

test('walChangeCounter moves on every commit by another connection or process, and only then', async () => {
  const file = tempFile();
  const database = openWal(file);
  database.exec('create table t (v integer)');
  const other = openWal(file);
  const counter = walChangeCounter(database, file);
  try {
    const start = counter.read();
    database.prepare('select count(*) from t').get();
    other.prepare('select count(*) from t').get();
    assert.equal(counter.read(), start, 'reads are not changes');

    other.prepare('insert into t values (1)').run();
    const afterOther = counter.read();
    assert.notEqual(afterOther, start, 'a commit by another connection of this process');
    assert.equal(counter.read(), afterOther, 'stays put while nothing is written');

    await writeFromAnotherProcess(file, 2);
    const afterProcess = counter.read();
    assert.notEqual(afterProcess, afterOther, 'a commit by another process');

    // A checkpoint that restarts the WAL, then a commit into the restarted WAL.
    other.pragma('wal_checkpoint(RESTART)');
    const beforeRestartCommit = counter.read();
    await writeFromAnotherProcess(file, 3);
    assert.notEqual(counter.read(), beforeRestartCommit, 'a commit after the WAL restarted');

    // A transaction rolled back by the other connection changes nothing.
    const beforeRollback = counter.read();
    other.exec('begin immediate; insert into t values (4); rollback');
    assert.equal(counter.read(), beforeRollback);
    assert.equal((database.prepare('select count(*) as n from t').get() as { n: number }).n, 3);
  } finally {
    counter.close();
    other.close();
    database.close();
  }
});

test('walChangeCounter falls back to PRAGMA data_version where there is no wal-index', () => {
  const file = tempFile();
  // A rollback-journal database has no -shm file to read.
  const database = new SQLite(file);
  database.exec('create table t (v integer)');
  const other = new SQLite(file);
  const counter = walChangeCounter(database, file);
  try {
    assert.equal(fs.existsSync(`${file}-shm`), false);
    const start = counter.read();
    other.prepare('insert into t values (1)').run();
    assert.notEqual(counter.read(), start);
  } finally {
    counter.close();
    other.close();
    database.close();
  }
});

test('walChangeCounter.runOwn leaves out the commit of the statement it runs, and nothing else', () => {
  const file = tempFile();
  const database = openWal(file);
  database.exec('create table t (v integer primary key)');
  const other = openWal(file);
  const counter = walChangeCounter(database, file);
  const insert = database.prepare('insert into t values (?) on conflict (v) do nothing');
  try {
    let at = counter.read();
    // This connection's own commit: not counted.
    assert.equal(counter.runOwn(() => insert.run(1)).changes, 1);
    assert.equal(counter.read(), at, 'its own commit');

    // Another connection's commit before it, not read yet: counted.
    other.prepare('insert into t values (2)').run();
    counter.runOwn(() => insert.run(3));
    assert.notEqual(counter.read(), at, 'a commit before it');
    at = counter.read();

    // Another connection's commit while it runs (here: inside the run, just before it).
    counter.runOwn(() => {
      other.prepare('insert into t values (4)').run();
      return insert.run(5);
    });
    assert.notEqual(counter.read(), at, 'a commit during it');
    at = counter.read();

    // A statement that changed nothing committed nothing: a commit beside it is another's.
    counter.runOwn(() => {
      other.prepare('insert into t values (6)').run();
      return insert.run(1);
    });
    assert.notEqual(counter.read(), at, 'a commit beside a statement that changed nothing');
    at = counter.read();

    // A failing statement: whatever moved is counted, and the error is the caller's.
    assert.throws(() =>
      counter.runOwn(() => {
        other.prepare('insert into t values (7)').run();
        return database.prepare('insert into t values (?)').run(1);
      }),
    );
    assert.notEqual(counter.read(), at, 'a commit beside a failed statement');
    at = counter.read();

    // After a checkpoint that restarts the log, its own commit is still left out alone.
    other.pragma('wal_checkpoint(RESTART)');
    at = counter.read();
    counter.runOwn(() => insert.run(8));
    assert.equal(counter.read(), at, 'its own commit into a restarted log');
    assert.equal((database.prepare('select count(*) as n from t').get() as { n: number }).n, 8);
  } finally {
    counter.close();
    other.close();
    database.close();
  }
});

test('sharedUntilNextTick: one read answers the code running now; read again in the next tick turn or once the epoch moved', async () => {
  const file = tempFile();
  const database = openWal(file);
  database.exec('create table t (v integer)');
  const other = openWal(file);
  const counter = walChangeCounter(database, file);
  let reads = 0;
  let epoch = 0;
  const shared = sharedUntilNextTick(
    () => {
      reads++;
      return counter.read();
    },
    () => epoch,
  );
  try {
    const first = shared();
    assert.equal(shared(), first);
    assert.equal(reads, 1, 'one read for both');

    // A commit now, by a connection the epoch does not count (another process's, as far as this
    // code can tell): the code running now was handed its requests before it, as if served first.
    other.prepare('insert into t values (1)').run();
    assert.equal(shared(), first);
    // The next turn reads again and sees it.
    await new Promise((resolve) => process.nextTick(resolve));
    const second = shared();
    assert.notEqual(second, first);
    assert.equal(reads, 2);

    // Within a microtask drain too: the turn ends with the drain.
    await Promise.resolve();
    assert.equal(shared(), second);
    other.prepare('insert into t values (2)').run();
    // A statement of this process (the epoch moves) may have seen that commit: read again at once.
    epoch++;
    const third = shared();
    assert.notEqual(third, second);
    assert.equal(reads, 3);
    assert.equal(shared(), third);
    assert.equal(reads, 3);
  } finally {
    counter.close();
    other.close();
    database.close();
  }
});
