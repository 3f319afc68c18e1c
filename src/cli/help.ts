import type { CommandHelp, OptionSpec } from '../app/command.js';

/** `serve` runs outside the command table (it never returns a result), but is described like one. */
export const serveHelp: CommandHelp = {
  name: 'serve',
  summary: 'Start the API (OPS_PORT) and delivery (OPS_CDN_PORT) listeners and the background jobs; what npm start runs. Stops on SIGTERM or SIGINT.',
  options: {
    workers: {
      type: 'string',
      value: 'N',
      description:
        'run N API processes sharing the two ports (default 1: this process serves). Without OPS_EVENTS_URL the first process owns the event store and serves it to the others (docs/deploy.md)',
    },
  },
  json: false,
};

/** `events-node` also runs until stopped: the event store of an installation with several API processes. */
export const eventsNodeHelp: CommandHelp = {
  name: 'events-node',
  summary:
    "Run the events node: own the event store under OPS_DATA_DIR/events (write-ahead log, DuckDB, retention) and serve it to the installation's API processes (their OPS_EVENTS_URL) on OPS_EVENTS_NODE_HOST:OPS_EVENTS_NODE_PORT (127.0.0.1:8090). Stops on SIGTERM or SIGINT.",
  options: {},
  json: false,
};

const jsonOption: OptionSpec = { type: 'boolean', description: 'print exactly one JSON object on stdout (errors too: {error: {code, message}})' };
const helpOption: OptionSpec = { type: 'boolean', description: 'describe the command and its options, then exit 0' };

const flag = (name: string, o: OptionSpec) => (o.type === 'boolean' ? `--${name}` : `--${name} ${o.value ?? 'VALUE'}`);

/** `opsctl token create --org ID … [--json]`: required options first as declared, optional ones in brackets. */
export function usageLine(c: CommandHelp): string {
  const parts = Object.entries(c.options).map(([name, o]) => (o.required ? flag(name, o) : `[${flag(name, o)}]`));
  if (c.json !== false) parts.push('[--json]');
  return ['opsctl', c.name, ...parts].join(' ');
}

/** `opsctl --help`: every command, its usage line (so every option) and what it does. */
export function overview(all: readonly CommandHelp[]): string {
  return [
    'usage: opsctl <command> [options]',
    '',
    'Administration of an opsplatform installation (the dashboard operations). Commands work on the',
    "server's stores (OPS_DATA_DIR, or OPS_DATABASE_URL for PostgreSQL), also while it runs.",
    '',
    'commands:',
    ...all.flatMap((c) => [`  ${usageLine(c)}`, `      ${c.summary}`]),
    '',
    'Every command but serve takes --json and then prints exactly one JSON object on stdout.',
    'Exit codes: 0 done, 1 refused (the message or the JSON error says why), 2 wrong command line.',
    '"opsctl <command> --help" (or "opsctl help <command>") describes a command and its options.',
  ].join('\n');
}

/** `opsctl token create --help`. */
export function commandHelp(c: CommandHelp): string {
  const options: Array<[string, OptionSpec]> = Object.entries(c.options);
  if (c.json !== false) options.push(['json', jsonOption]);
  options.push(['help', helpOption]);
  const labels = options.map(([name, o]) => flag(name, o));
  const width = Math.max(...labels.map((l) => l.length));
  return [
    `usage: ${usageLine(c)}`,
    '',
    c.summary,
    '',
    'options:',
    ...options.map(([, o], i) => `  ${labels[i]!.padEnd(width)}  ${o.description}${o.required ? ' (required)' : ''}`),
  ].join('\n');
}

/** `opsctl token --help`: the commands of one group. */
export function groupHelp(group: string, members: readonly CommandHelp[]): string {
  return [
    `usage: opsctl ${group} <${members.map((c) => c.name.split(' ')[1]).join('|')}> [options]`,
    '',
    ...members.flatMap((c) => [`  ${usageLine(c)}`, `      ${c.summary}`]),
    '',
    `"opsctl ${group} <command> --help" describes a command and its options.`,
  ].join('\n');
}
