// opsctl run by tests against a test server's stores: in the test's process (runOpsctl, what
// bin/opsctl.js calls, output captured) or as the compiled executable (exit codes as a shell sees them).
import { spawn } from 'node:child_process';
import { runOpsctl } from '../cli/run.js';
import { opsctlArgs } from './test-process.js';
import type { TestServer } from './test-server.js';

export interface Run {
  code: number;
  /** The one JSON object printed with --json ({} without --json), read loosely: each test checks what it uses. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: Record<string, any>;
  stdout: string;
  stderr: string;
}

/** The one JSON object a --json run printed, or an error naming what it printed instead. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function parsed(args: string[], stdout: string, stderr: string): Record<string, any> {
  if (!args.includes('--json')) return {};
  try {
    return JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`opsctl ${args.join(' ')} printed something other than one JSON object: ${stdout}\n${stderr}`);
  }
}

/** The environment opsctl runs with: the test server's data dir and database, then `env`'s changes. */
function cliEnv(s: TestServer | { dataDir: string }, env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const full: NodeJS.ProcessEnv = { ...process.env, OPS_DATA_DIR: s.dataDir };
  delete full.OPS_DATABASE_URL;
  if ('server' in s && s.server.ctx.config.databaseUrl) full.OPS_DATABASE_URL = s.server.ctx.config.databaseUrl;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete full[name];
    else full[name] = value;
  }
  return full;
}

/**
 * Runs opsctl's commands against the test server's stores, while the server runs, in this process
 * (runOpsctl, what bin/opsctl.js calls, with its output captured): a spawned process per command
 * cost this file two minutes. The exit codes of the real process: opsctlProcess.
 */
export async function opsctl(s: TestServer | { dataDir: string }, args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io = { out: (text: string) => (stdout += `${text}\n`), err: (text: string) => (stderr += `${text}\n`), env: cliEnv(s, env) };
  const code = await runOpsctl(args, io).catch((error: unknown) => {
    io.err(`opsctl: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  });
  return { code, json: parsed(args, stdout, stderr), stdout, stderr };
}

/** The compiled `opsctl` as its own process: exit codes and output as a shell sees them. */
export function opsctlProcess(s: TestServer | { dataDir: string }, args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, opsctlArgs(...args), { env: cliEnv(s, env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve({ code: code ?? -1, json: parsed(args, stdout, stderr), stdout, stderr });
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}
