// The opsctl executable (bin/opsctl.js runs its compiled form): the commands are in run.ts.
import { runOpsctl } from './run.js';

// The process's environment is the entry point's to set, not a store's: the AWS SDK warns once
// per process that its releases after January 2027 need Node 22, and the version in
// package-lock.json runs on Node 20 (docs/dependencies.md).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

runOpsctl(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`opsctl: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
