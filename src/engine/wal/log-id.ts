import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const fileName = 'log-id';

/**
 * The id of the write-ahead log in an events directory: on ClickHouse every API process is an
 * ingester with a log of its own, and each stored row carries its log's id beside
 * its seq, so (log id, seq) names an event once across every host, and each log's loaded
 * position is kept apart from the others'. 16 hex digits, made when the directory is first used
 * and kept in `OPS_DATA_DIR/events/log-id`; the directory moves with it (`opsctl events
 * replay --dir` loads a dead host's log under its own id, so nothing is stored twice).
 *
 * A directory whose log was written before log ids (a `wal/` folder and no id file) keeps the
 * empty id: its rows in ClickHouse carry '' and its position is the single-log table's.
 * Call with the directory locked (dir-lock.ts): two processes must not make two ids.
 */
export function readOrCreateLogId(dir: string): string {
  const file = path.join(dir, fileName);
  try {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (id === '' || /^[0-9a-f]{16}$/.test(id)) return id;
    throw new Error(`${file} holds "${id.slice(0, 40)}", not a log id (16 hex digits): restore the file or move the directory aside`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const id = fs.existsSync(path.join(dir, 'wal')) ? '' : crypto.randomBytes(8).toString('hex');
  fs.mkdirSync(dir, { recursive: true });
  // Written whole then renamed: a crash leaves no half id.
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${id}\n`);
  fs.renameSync(temporary, file);
  return id;
}
