// Loaded into each test file's process by scripts/run-tests.mjs (`--import`; processes the tests
// spawn do not load it): when the process exits it writes the file's wall time and CPU time to
// OPS_TEST_COST_DIR, for the runner's table of the slowest files. The CPU counted is the file's
// own and that of the children it has waited for — the `opsctl serve` processes it killed, the
// Chromium it closed — which the kernel adds to the parent at each wait (/proc/self/stat's
// cutime and cstime). One small file per process, so no lock and nothing shared.
import fs from 'node:fs';
import path from 'node:path';

const dir = process.env.OPS_TEST_COST_DIR;
const file = process.argv[1];
if (dir && file?.endsWith('.test.js')) {
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    let children = 0;
    try {
      // Fields after the command's closing parenthesis: state is [0], utime [11], stime [12],
      // cutime [13], cstime [14], in clock ticks (USER_HZ, 100 on Linux).
      const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
      children = (Number(fields[13]) + Number(fields[14])) / 100;
    } catch {
      // not Linux: the file's own CPU only
    }
    try {
      fs.writeFileSync(
        path.join(dir, `${process.pid}.json`),
        JSON.stringify({ file, wall: process.uptime(), cpu: (cpu.user + cpu.system) / 1e6, children }),
      );
    } catch {
      // a table row missing, never a failed test
    }
  });
}
