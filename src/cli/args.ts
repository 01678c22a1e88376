/** Parse a subcommand's arguments against its spec, and render its help. */
import { BusError } from '../model/errors.js';
import type { CommandSpec, OptionSpec, ParsedArgs } from './spec.js';
import { quoted } from '../model/quote.js';

/** Bad usage: a wrong flag, a missing or extra argument. Exit code 2, like other CLIs. */
export class UsageError extends BusError {
  constructor(message: string) {
    super(message, 2);
  }
}

export const HELP_OPTION: OptionSpec = { name: 'help', short: 'h', type: 'boolean', description: 'show this help and exit' };

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
    if (!option) throw usage(`unknown option ${quoted(long ? `--${key}` : arg)}`);
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

function optionLabel(option: OptionSpec): string {
  const long = `--${option.name}${option.type === 'string' ? ` ${option.value ?? 'VALUE'}` : ''}`;
  return option.short ? `-${option.short}, ${long}` : `    ${long}`;
}

export function commandHelp(spec: CommandSpec): string {
  const args = spec.positionals.map((positional) => (positional.required ? positional.name : `[${positional.name}]`));
  const lines = [`Usage: agent-bus ${spec.name} [options]${args.length > 0 ? ` ${args.join(' ')}` : ''}`, '', spec.summary];
  if (spec.details) lines.push('', spec.details);
  if (spec.positionals.length > 0) {
    lines.push('', 'Arguments:');
    const width = Math.max(...spec.positionals.map((positional) => positional.name.length)) + 2;
    for (const positional of spec.positionals) lines.push(`  ${positional.name.padEnd(width)}${positional.description}`);
  }
  const options = [...spec.options, HELP_OPTION];
  const labels = options.map(optionLabel);
  const width = Math.max(...labels.map((label) => label.length)) + 2;
  lines.push('', 'Options:');
  options.forEach((option, index) => {
    const fallback = option.default !== undefined ? ` (default: ${option.default})` : '';
    lines.push(`  ${(labels[index] ?? '').padEnd(width)}${option.description}${fallback}`);
  });
  if (spec.examples && spec.examples.length > 0) {
    lines.push('', 'Examples:');
    for (const example of spec.examples) lines.push(`  ${example}`);
  }
  return `${lines.join('\n')}\n`;
}
