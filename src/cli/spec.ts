/**
 * How a subcommand describes itself: its arguments, options and help text.
 * The parser (args.ts) is written for start-up time: hooks and `inbox` start
 * a fresh process on every turn, so start-up time is the budget.
 */
import type { Env } from '../model/settings.js';
import type { Output } from './output.js';

export interface OptionSpec {
  name: string;
  short?: string;
  type: 'string' | 'boolean';
  /** Placeholder shown in help for a string option, e.g. NAME. */
  value?: string;
  description: string;
  default?: string;
}

export const HELP_OPTION: OptionSpec = { name: 'help', short: 'h', type: 'boolean', description: 'show this help and exit' };

export interface PositionalSpec {
  name: string;
  required: boolean;
  /** Takes every remaining argument (only the last one may). */
  variadic?: boolean;
  description: string;
}

export interface CommandIo {
  argv: string[];
  env: Env;
  cwd: string;
  stdout: Output;
  stderr: Output;
  /** Standard input, built only when a command reads it. */
  stdin(): NodeJS.ReadStream;
}

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export type CommandRunner = (args: ParsedArgs, io: CommandIo) => Promise<number>;

/**
 * Where a command sits in `agent-bus --help`, in the order the groups are shown. `hooks`: the commands
 * a client runs (its hooks, its status line), listed only under `agent-bus help hooks`.
 */
export const COMMAND_GROUPS = ['start', 'mail', 'coordination', 'fleet', 'channels', 'hub', 'maintenance', 'hooks'] as const;
export type CommandGroup = (typeof COMMAND_GROUPS)[number];

export interface CommandSpec {
  name: string;
  group: CommandGroup;
  /** One line for the command lists: short enough to fit beside the name in 100 columns. */
  summary: string;
  /** Longer help text, printed under the usage line. */
  details?: string;
  positionals: PositionalSpec[];
  options: OptionSpec[];
  /** One or two real command lines, shown last in the help. */
  examples: string[];
  /**
   * The run the build makes of the command's bundle to record its code cache: a representative
   * command line on a scratch bus. `refused`: the run is refused on purpose (it still compiles the
   * start-up); `exitsWith`: the status it ends with when that is not 0.
   */
  warmup: { args: string[]; refused?: true; exitsWith?: number };
}
