/** Parse a subcommand's arguments against its spec and render its help. */
import { parseArgs } from 'node:util';
import { BusError } from '../core/errors.js';
import type { CommandSpec, OptionSpec, ParsedArgs } from './spec.js';

/** Bad usage: a wrong flag, a missing or extra argument. Exit code 2, like other CLIs. */
export class UsageError extends BusError {
  constructor(message: string) {
    super(message, 2);
  }
}

export const HELP_OPTION: OptionSpec = { name: 'help', short: 'h', type: 'boolean', description: 'show this help and exit' };

function firstSentence(message: string): string {
  const cut = message.search(/\.\s/);
  return (cut >= 0 ? message.slice(0, cut) : message).replace(/\.$/, '');
}

export function parseCommandArgs(spec: CommandSpec, argv: string[]): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const option of [...spec.options, HELP_OPTION]) {
    options[option.name] = option.short ? { type: option.type, short: option.short } : { type: option.type };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${spec.name}: ${firstSentence((error as Error).message)}. See 'agent-bus ${spec.name} --help'.`);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) return { values, positionals: parsed.positionals };
  const required = spec.positionals.filter((positional) => positional.required);
  if (parsed.positionals.length < required.length) {
    const missing = required[parsed.positionals.length];
    throw new UsageError(`${spec.name}: missing ${missing?.name ?? 'argument'}. See 'agent-bus ${spec.name} --help'.`);
  }
  if (parsed.positionals.length > spec.positionals.length) {
    const extra = parsed.positionals[spec.positionals.length];
    const hint = spec.positionals.length > 0 ? ` (quote ${spec.positionals.at(-1)?.name} if it has spaces)` : '';
    throw new UsageError(`${spec.name}: unexpected argument '${extra}'${hint}. See 'agent-bus ${spec.name} --help'.`);
  }
  return { values, positionals: parsed.positionals };
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
