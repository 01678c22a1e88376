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

export interface CommandSpec {
  name: string;
  summary: string;
  /** Longer help text, printed under the usage line. */
  details?: string;
  positionals: PositionalSpec[];
  options: OptionSpec[];
  examples?: string[];
  /**
   * The run the build makes of the command's bundle to record its code cache: a representative
   * command line on a scratch bus. `refused`: the run is refused on purpose (it still compiles the
   * start-up); `exitsWith`: the status it ends with when that is not 0.
   */
  warmup: { args: string[]; refused?: true; exitsWith?: number };
}
