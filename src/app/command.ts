import type { AppContext } from './context.js';
import { badRequest } from '../errors/app-error.js';

/** What a command receives: its parsed flags and a context on the same stores as the server. */
export type Flags = Record<string, string | boolean | undefined>;

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** The value's placeholder in usage lines: `--org ID`. */
  value?: string;
  /** Checked before the command runs: missing is a command-line error (exit 2). */
  required?: boolean;
  /** One line for `--help`. */
  description: string;
}

/** What `--help` shows of a command. */
export interface CommandHelp {
  /** e.g. "org create" */
  name: string;
  /** One line: what it does and what it prints. */
  summary: string;
  options: Record<string, OptionSpec>;
  /** False for `serve`, the one command that prints no JSON result. */
  json?: false;
}

/** How the text output (without --json) shows a result that holds a list: one table. */
export interface Table {
  /** The result's key that holds the rows. */
  list: string;
  columns: Array<[header: string, cell: (row: Record<string, unknown>) => unknown]>;
}

/** What a command may say to the person besides its result (a warning on standard error). */
export interface CommandIo {
  err(text: string): void;
}

export interface Command extends CommandHelp {
  table?: Table;
  run(ctx: AppContext, flags: Flags, io: CommandIo): Promise<object>;
}

/** A required string flag (main checks `required` first; this is the commands' own guard). */
export const str = (flags: Flags, name: string): string => {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw badRequest(`--${name} is required`);
  return value;
};
/** An optional string flag. */
export const opt = (flags: Flags, name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);


/** `--org ID`, required unless a command says otherwise. */
export const orgOption = { type: 'string', value: 'ID', required: true, description: 'organisation id (ULID)' } as const;
