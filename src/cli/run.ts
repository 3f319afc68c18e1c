import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { AppError } from '../errors/app-error.js';
import { commands, extraCommands, type Command, type CommandHelp } from './commands.js';
import { commandHelp, eventsNodeHelp, groupHelp, overview, serveHelp, usageLine } from './help.js';
import { keyValues, table } from './output.js';
import type { Env } from '../config/config.js';

/**
 * Where a run of opsctl writes and what it reads: the process's console and environment for the
 * real CLI (main.ts), buffers for tests that run commands in their own process.
 */
export interface CliIo {
  /** One result or help text, on standard output. */
  out(text: string): void;
  /** A message for the person, on standard error. */
  err(text: string): void;
  env: Env;
}

export const processIo: CliIo = { out: (text) => console.log(text), err: (text) => console.error(text), env: process.env };

const all: Command[] = [...commands, ...extraCommands];
const described: CommandHelp[] = [serveHelp, eventsNodeHelp, ...all];
const isHelp = (arg: string) => arg === '--help' || arg === '-h';

/** The command named by the first words of argv ("token create", "whoami"), or the group ("token"). */
function resolve(words: string[]): { command?: CommandHelp; group?: CommandHelp[]; rest: string[] } {
  const two = words.slice(0, 2).join(' ');
  const command = described.find((c) => c.name === two) ?? described.find((c) => c.name === words[0]);
  if (command) return { command, rest: words.slice(command.name.split(' ').length) };
  const group = described.filter((c) => c.name.startsWith(`${words[0]} `));
  return { group: group.length ? group : undefined, rest: words.slice(1) };
}

/** Exit codes: 0 done, 1 the operation was refused, 2 the command line is wrong. */
export async function runOpsctl(argv: string[], io: CliIo = processIo): Promise<number> {
  // Help comes first and needs no configuration: it is what someone reads when theirs is wrong.
  if (argv.length === 0) {
    io.err(overview(described));
    return 2;
  }
  if (isHelp(argv[0]!) || (argv[0] === 'help' && argv.length === 1)) {
    io.out(overview(described));
    return 0;
  }
  const asksHelp = argv[0] === 'help' || argv.some(isHelp);
  const words = argv[0] === 'help' ? argv.slice(1).filter((a) => !isHelp(a)) : argv;
  const { command, group, rest } = resolve(words);
  if (!command) {
    // `opsctl token` alone, or with --help: the group's commands; anything else is unknown.
    if (group && (asksHelp || rest.length === 0)) {
      if (asksHelp) io.out(groupHelp(words[0]!, group));
      else io.err(`opsctl: "${words[0]}" needs a command\n\n${groupHelp(words[0]!, group)}`);
      return asksHelp ? 0 : 2;
    }
    const name = words.slice(0, 2).join(' ');
    io.err(`opsctl: unknown command "${name}"\n\n${group ? groupHelp(words[0]!, group) : overview(described)}`);
    return 2;
  }
  if (asksHelp) {
    io.out(commandHelp(command));
    return 0;
  }

  // A wrong command line is exit 2; with --json it is also one JSON object on stdout.
  const refuse = (message: string, detail: string): number => {
    io.err(`opsctl: ${message}${detail ? `\n${detail}` : ''}`);
    if (argv.includes('--json')) io.out(JSON.stringify({ error: { code: 'bad_request', message } }));
    return 2;
  };
  let flags: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(Object.entries(command.options).map(([name, o]) => [name, { type: o.type }]));
    if (command.json !== false) options.json = { type: 'boolean' };
    flags = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    return refuse((error as Error).message, `usage: ${usageLine(command)}`);
  }
  const missing = Object.entries(command.options).find(([name, o]) => o.required && (flags[name] === undefined || flags[name] === ''));
  if (missing) return refuse(`--${missing[0]} is required`, `\n${commandHelp(command)}`);

  let config;
  try {
    config = loadConfig(io.env);
  } catch (error) {
    if (error instanceof ConfigError) return refuse(`invalid configuration: ${error.message}`, '');
    throw error;
  }
  if (command === serveHelp) {
    const workers = flags.workers === undefined ? 1 : Number(flags.workers);
    if (!Number.isInteger(workers) || workers < 1 || workers > 256) return refuse(`--workers must be a whole number from 1 to 256, got "${String(flags.workers)}"`, '');
    return serve(config, workers, io);
  }
  if (command === eventsNodeHelp) return eventsNode(config);

  const runnable = command as Command;
  const json = flags.json === true;
  const ctx = await createContext(config, systemClock);
  try {
    const result = await runnable.run(ctx, flags, io);
    if (json) io.out(JSON.stringify(result));
    else io.out(runnable.table ? table(result as Record<string, unknown>, runnable.table) : keyValues(result));
    return 0;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (json) io.out(JSON.stringify({ error: { code: error.code, message: error.message } }));
    else io.err(`opsctl: ${error.message}`);
    return 1;
  } finally {
    await ctx.close();
  }
}

/** Resolves when SIGTERM or SIGINT has been received and `close` has finished (a second signal is ignored). */
function untilStopped(log: { info(o: object, m: string): void; error(o: object, m: string): void }, close: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      close().then(resolve, (error: unknown) => {
        log.error({ err: error }, 'error during shutdown');
        resolve();
      });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}

async function serve(config: ReturnType<typeof loadConfig>, workers: number, io: CliIo): Promise<number> {
  // Loaded here: the other commands start faster without the server's modules.
  if (workers > 1) {
    const { runWorkers } = await import('./workers.js');
    if (await runWorkers(config, workers)) return 0;
  }
  const { startServer } = await import('../server.js');
  let server;
  try {
    server = await startServer(config);
  } catch (error) {
    // A value only the store it configures can check (an s3:// URL's options, a missing shared
    // OPS_SECRET_KEY): the same exit 2 as any other bad configuration.
    if (!(error instanceof ConfigError)) throw error;
    io.err(`opsctl: invalid configuration: ${error.message}`);
    return 2;
  }
  server.api.log.info(
    { api: server.apiUrl, cdn: server.cdnUrl, data: config.dataDir, database: config.databaseUrl ? 'postgres' : 'sqlite', events: config.eventsUrl ?? (config.eventsClickHouseUrl ? 'clickhouse' : 'embedded'), worker: config.workerIndex },
    'opsplatform started',
  );
  await untilStopped(server.api.log, () => server.close());
  // A worker of `serve --workers` stays alive while its channel to the primary is open.
  if (workers > 1) process.disconnect?.();
  return 0;
}

async function eventsNode(config: ReturnType<typeof loadConfig>): Promise<number> {
  const { startEventsNode } = await import('./run-events-node.js');
  const node = await startEventsNode(config);
  node.log.info({ url: node.url, data: config.dataDir }, 'events node started');
  await untilStopped(node.log, () => node.close());
  return 0;
}

