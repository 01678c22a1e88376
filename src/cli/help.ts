/**
 * The CLI's help: the top list grouped by purpose, each command's own page, and the topics `help`
 * knows besides the commands (`hooks`). Every line fits HELP_WIDTH columns.
 */
import { closeMatches } from '../core/similarity.js';
import { quoted } from '../model/quote.js';
import { UsageError } from './args.js';
import { COMMANDS, findCommand } from './commands.js';
import { COMMAND_GROUPS, HELP_OPTION, type CommandGroup, type CommandSpec, type OptionSpec } from './spec.js';

/** The widest a help line may be. */
export const HELP_WIDTH = 100;

const GROUP_TITLES: Record<CommandGroup, string> = {
  start: 'Getting started',
  mail: 'Mail',
  coordination: 'Coordination (presence, reservations, tasks)',
  fleet: 'The fleet (agents the bus starts)',
  channels: 'Channels and the brain',
  hub: 'The hub (agents on other machines)',
  maintenance: 'Maintenance',
  hooks: 'Run by the clients and the bus (agent-bus help hooks)',
};

/** Topics `agent-bus help TOPIC` knows that are not commands. */
const TOPICS = ['hooks'] as const;

/**
 * `text` broken at spaces into lines of at most `width` columns; lines after the first start with
 * `indent`. A word longer than a line is kept whole.
 */
export function wrapText(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = `${indent}${word}`;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines;
}

/** A label column and its text, the text wrapped under itself when it runs past HELP_WIDTH. */
function labelled(label: string, labelWidth: number, text: string): string[] {
  const head = `  ${label.padEnd(labelWidth)}`;
  const indent = ' '.repeat(head.length);
  return wrapText(text, HELP_WIDTH - head.length).map((line, index) => `${index === 0 ? head : indent}${line}`);
}

/** A line of a command's details, wrapped under its own indent when it is too long. */
function detailLines(line: string): string[] {
  if (line.length <= HELP_WIDTH) return [line];
  const indent = /^ */.exec(line)?.[0] ?? '';
  return wrapText(line.slice(indent.length), HELP_WIDTH - indent.length - 2).map((part, index) => `${indent}${index === 0 ? '' : '  '}${part}`);
}

export function usageLine(spec: CommandSpec): string {
  const args = spec.positionals.map((positional) => (positional.required ? positional.name : `[${positional.name}]`));
  return `Usage: agent-bus ${spec.name} [options]${args.length > 0 ? ` ${args.join(' ')}` : ''}`;
}

function optionLabel(option: OptionSpec): string {
  const long = `--${option.name}${option.type === 'string' ? ` ${option.value ?? 'VALUE'}` : ''}`;
  return option.short ? `-${option.short}, ${long}` : `    ${long}`;
}

/** One command's help: usage, summary, details, arguments, options, then its examples. */
export function commandHelp(spec: CommandSpec): string {
  const lines = [usageLine(spec), '', ...wrapText(spec.summary, HELP_WIDTH)];
  if (spec.details) lines.push('', ...spec.details.split('\n').flatMap(detailLines));
  if (spec.positionals.length > 0) {
    lines.push('', 'Arguments:');
    const width = Math.max(...spec.positionals.map((positional) => positional.name.length)) + 2;
    for (const positional of spec.positionals) lines.push(...labelled(positional.name, width, positional.description));
  }
  const options = [...spec.options, HELP_OPTION];
  const labels = options.map(optionLabel);
  const width = Math.max(...labels.map((label) => label.length)) + 2;
  lines.push('', 'Options:');
  options.forEach((option, index) => {
    const fallback = option.default !== undefined ? ` (default: ${option.default})` : '';
    lines.push(...labelled(labels[index] ?? '', width, `${option.description}${fallback}`));
  });
  lines.push('', 'Examples:', ...spec.examples.map((example) => `  ${example}`));
  return `${lines.join('\n')}\n`;
}

function commandList(commands: CommandSpec[], width: number): string[] {
  return commands.flatMap((command) => labelled(command.name, width, command.summary));
}

/** `agent-bus --help`: what agent-bus is, then its commands by purpose; the clients' own commands are left to `help hooks`. */
export function topHelp(): string {
  const shown = COMMANDS.filter((command) => command.group !== 'hooks');
  const width = Math.max(...shown.map((command) => command.name.length)) + 2;
  const lines = [
    'Usage: agent-bus <command> [options]',
    '',
    'A bus through which coding agents and the people steering them message each other,',
    'claim files and hand over tasks.',
  ];
  for (const group of COMMAND_GROUPS) {
    if (group === 'hooks') continue;
    lines.push('', `${GROUP_TITLES[group]}:`, ...commandList(shown.filter((command) => command.group === group), width));
  }
  lines.push(
    '',
    'Options:',
    '  -V, --version  print the version',
    '  -h, --help     show this help',
    '',
    "Run 'agent-bus <command> --help' for a command's options and examples, and",
    "'agent-bus help hooks' for the commands the clients run (hooks, the status line).",
  );
  return `${lines.join('\n')}\n`;
}

/** `agent-bus help hooks`: the commands a client runs, which a person rarely types. */
export function hooksHelp(): string {
  const hooks = COMMANDS.filter((command) => command.group === 'hooks');
  const width = Math.max(...hooks.map((command) => command.name.length)) + 2;
  const lines = [
    'Commands the clients run',
    '',
    ...wrapText(
      'agent-bus init writes these into each client\'s settings: the client runs them at a turn boundary, before ' +
        'a tool call, or for its status line, with the hook payload (JSON) on standard input. Each reads its agent ' +
        'from the repo it runs in and --client, answers in that client\'s own format, and never breaks the turn: ' +
        'on any failure it prints one line and exits 0. Claude Code (2.1.332 and later) and Codex (0.171 and later) ' +
        'get the same answers from the session\'s own agent-bus server instead, with no process (see docs/clients.md).',
      HELP_WIDTH,
    ),
    '',
    `${GROUP_TITLES.hooks.replace(/ \(.*\)$/, '')}:`,
    ...commandList(hooks, width),
    '',
    "Run 'agent-bus <command> --help' for one of them.",
  ];
  return `${lines.join('\n')}\n`;
}

/** The nearest real command or topic to a mistyped one, if any is near. */
export function nearestCommand(word: string): string | undefined {
  if (word.length > 64) return undefined;
  return closeMatches(word, [...COMMANDS.map((command) => command.name), 'help', ...TOPICS], 1)[0];
}

/** `Did you mean 'x'?`, or nothing when no candidate is near. */
export function didYouMean(suggestion: string | undefined): string {
  return suggestion === undefined ? '' : ` Did you mean ${quoted(suggestion)}?`;
}

/** The help `agent-bus help TOPIC` prints: a command's, or a topic's; a usage error for anything else. */
export function helpFor(topic: string | undefined): string {
  if (topic === undefined) return topHelp();
  if (topic === 'hooks') return hooksHelp();
  const spec = findCommand(topic);
  if (spec) return commandHelp(spec);
  throw new UsageError(`help: no command or topic ${quoted(topic)}.${didYouMean(nearestCommand(topic))}`);
}
