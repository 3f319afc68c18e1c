import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from '../config/config.js';
import { createContext } from '../app/context.js';
import { systemClock } from '../shared/clock.js';
import { AppError } from '../errors/app-error.js';
import { startServer } from '../server.js';
import { commands, extraCommands, type Command } from './commands.js';

function help(): string {
  const all = [...commands, ...extraCommands];
  return ['usage: opsctl <command> [options]', '', '  opsctl serve', ...all.map((c) => `  ${c.usage}`)].join('\n');
}

/** Exit codes: 0 done, 1 the operation was refused, 2 the command line is wrong. */
async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    console.log(help());
    return argv.length === 0 ? 2 : 0;
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`opsctl: invalid configuration: ${error.message}`);
      return 2;
    }
    throw error;
  }
  if (argv[0] === 'serve') return serve(config);

  const all = [...commands, ...extraCommands];
  const command: Command | undefined = all.find((c) => c.name === argv.slice(0, 2).join(' ')) ?? all.find((c) => c.name === argv[0]);
  if (!command) {
    console.error(`opsctl: unknown command "${argv.slice(0, 2).join(' ')}"\n\n${help()}`);
    return 2;
  }
  const rest = argv.slice(command.name.split(' ').length);
  let flags;
  try {
    flags = parseArgs({ args: rest, options: { ...command.options, json: { type: 'boolean' } }, strict: true, allowPositionals: false }).values;
  } catch (error) {
    console.error(`opsctl: ${(error as Error).message}\nusage: ${command.usage}`);
    return 2;
  }
  const json = flags.json === true;
  const ctx = await createContext(config, systemClock, 'cli');
  try {
    const result = await command.run(ctx, flags);
    console.log(json ? JSON.stringify(result) : Object.entries(result).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('\n'));
    return 0;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (json) console.log(JSON.stringify({ error: { code: error.code, message: error.message } }));
    else console.error(`opsctl: ${error.message}`);
    return 1;
  } finally {
    await ctx.close();
  }
}

async function serve(config: ReturnType<typeof loadConfig>): Promise<number> {
  const server = await startServer(config);
  server.api.log.info({ api: server.apiUrl, cdn: server.cdnUrl, data: config.dataDir, database: config.databaseUrl ? 'postgres' : 'sqlite' }, 'opsplatform started');
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      server.api.log.info({ signal }, 'shutting down');
      server.close().then(resolve, (error: unknown) => {
        server.api.log.error({ err: error }, 'error during shutdown');
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`opsctl: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
