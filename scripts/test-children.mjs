// Loaded into each test file's process by scripts/run-tests.mjs (`--import`): every process the
// file starts (an `opsctl serve`, an events node, syslog-ng, Chromium) is killed when the file's
// process ends, however it ends. Without this, a file stopped by the runner's timeout left its
// servers running; they hold the runner's stderr (inherited), so `node --test` waited for them
// and the whole run hung (~6 minutes once, until someone killed them by hand).
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

const alive = new Set();
const track = (start) =>
  function tracked(...args) {
    const child = start.apply(this, args);
    alive.add(child);
    child.once('exit', () => alive.delete(child));
    return child;
  };
childProcess.spawn = track(childProcess.spawn);
childProcess.fork = track(childProcess.fork);
// ESM's named imports of a builtin (`import { spawn } from 'node:child_process'`) see the
// patched functions only after this.
syncBuiltinESMExports();

const killAll = () => {
  for (const child of alive) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
};
process.on('exit', killAll);
// The runner stops a file past its timeout with SIGTERM, which ends a Node process without its
// 'exit' handlers: kill the children first, then end as SIGTERM would have.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}
