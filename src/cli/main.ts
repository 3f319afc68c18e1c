// The opsctl executable (bin/opsctl.js runs its compiled form): the commands are in run.ts.
import { runOpsctl } from './run.js';

runOpsctl(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`opsctl: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
