/** Parse a subcommand's arguments against its spec, and render its help. */
import { BadValueError, type BusError } from '../model/errors.js';
import { closeMatches } from '../core/similarity.js';
import { HELP_OPTION, type CommandSpec, type OptionSpec, type ParsedArgs } from './spec.js';
import { quoted } from '../model/quote.js';

/**
 * Bad usage: an unknown command or flag, a missing or stray argument, a bad value. Exit code 2, like
 * other CLIs; the CLI prints the usage line after its message.
 */
export class UsageError extends BadValueError {}

/** Whether an error is bad usage. By its mark, not its class: each command's bundle has its own copy of the classes. */
export function isUsageError(error: unknown): boolean {
  return error instanceof Error && (error as Partial<BusError>).usage === true;
}

/**
 * Parse a subcommand's arguments against its options. Written here rather than
 * with node:util's parseArgs, whose first call costs about 0.7 ms (it loads
 * and validates lazily), and hooks and `inbox` start a fresh process at every
 * turn of every agent. Supports `--opt value`, `--opt=value`, `-x` booleans,
 * `-x value` for a short string option, and `--` to end options; a lone `-` is
 * a positional (send reads its body from stdin with it).
 */
/**
 * `-x` or `--name` (a letter after the dashes, no space): an option. A lone
 * `-`, a negative number or text with a space (`send "-5 degrees"`) is a value.
 */
function looksLikeOption(arg: string): boolean {
  return /^--?[A-Za-z]/.test(arg) && !/\s/.test(arg.split('=')[0] ?? arg);
}

/** ` (did you mean '--to'?)` for a mistyped option near a real one, else nothing. */
function nearestOption(options: OptionSpec[], given: string): string {
  if (given.length > 64) return '';
  const names = options.flatMap((option) => [`--${option.name}`, ...(option.short ? [`-${option.short}`] : [])]);
  const near = closeMatches(given, names, 1)[0];
  return near === undefined ? '' : ` (did you mean ${quoted(near)}?)`;
}

export function parseCommandArgs(spec: CommandSpec, argv: string[]): ParsedArgs {
  const options = [...spec.options, HELP_OPTION];
  const usage = (problem: string): UsageError => new UsageError(`${spec.name}: ${problem}. See 'agent-bus ${spec.name} --help'.`);
  const values: Record<string, string | boolean | undefined> = {};
  const positionals: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(index + 1));
      break;
    }
    if (!looksLikeOption(arg)) {
      positionals.push(arg);
      continue;
    }
    const long = arg.startsWith('--');
    const equals = long ? arg.indexOf('=') : -1;
    const key = long ? arg.slice(2, equals < 0 ? undefined : equals) : arg.slice(1);
    const option = options.find((candidate) => (long ? candidate.name === key : candidate.short === key));
    if (!option) throw usage(`unknown option ${quoted(long ? `--${key}` : arg)}${nearestOption(options, long ? `--${key}` : arg)}`);
    const label = long ? `--${option.name}` : `-${option.short ?? ''}`;
    if (option.type === 'boolean') {
      if (equals >= 0) throw usage(`option ${quoted(label)} takes no value`);
      values[option.name] = true;
      continue;
    }
    let value: string | undefined;
    if (equals >= 0) value = arg.slice(equals + 1);
    else {
      value = argv[index + 1];
      // A value that looks like an option is a missing value ('-1' and '-5 degrees' are values).
      if (value === undefined || looksLikeOption(value)) throw usage(`option ${quoted(label)} needs a value (${option.value ?? 'VALUE'})`);
      index++;
    }
    values[option.name] = value;
  }
  if (values.help) return { values, positionals };
  const required = spec.positionals.filter((positional) => positional.required);
  if (positionals.length < required.length) {
    throw usage(`missing ${required[positionals.length]?.name ?? 'argument'}`);
  }
  if (positionals.length > spec.positionals.length && !spec.positionals.at(-1)?.variadic) {
    const extra = positionals[spec.positionals.length];
    const hint = spec.positionals.length > 0 ? ` (quote ${spec.positionals.at(-1)?.name} if it has spaces)` : '';
    throw usage(`unexpected argument ${quoted(extra)}${hint}`);
  }
  return { values, positionals };
}
