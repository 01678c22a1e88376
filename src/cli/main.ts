/** The CLI's dispatcher: global flags, help, the subcommand, and one-line errors with exit codes. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isBusError } from '../model/errors.js';
import { storeProblem } from '../adapters/store-problem.js';
import { errorLine, quoted } from '../model/quote.js';
import { busPaths } from '../adapters/paths.js';
import { setting } from '../model/settings.js';
import { commandHelp, parseCommandArgs, UsageError } from './args.js';
import { COMMANDS, findCommand } from './commands.js';
import { ReaderGone } from './output.js';
import type { CommandIo, CommandRunner } from './spec.js';

/** The version in agent-bus's package.json, found by walking up from this file (source or bundle). */
export function version(): string {
  let folder = import.meta.dirname;
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'agent-bus' && manifest.version) return manifest.version;
    } catch {
      // No manifest here: keep walking up.
    }
    const parent = dirname(folder);
    if (parent === folder) return 'unknown';
    folder = parent;
  }
}

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length)) + 2;
  const lines = [
    'Usage: agent-bus <command> [options]',
    '',
    'A persistent message bus for coding agents and the humans steering them.',
    '',
    'Commands:',
    ...COMMANDS.map((command) => `  ${command.name.padEnd(width)}${command.summary}`),
    '',
    'Options:',
    '  -V, --version  print the version',
    '  -h, --help     show this help',
    '',
    "Run 'agent-bus <command> --help' for a command's options.",
  ];
  return `${lines.join('\n')}\n`;
}

function report(io: CommandIo, error: unknown): number {
  if (isBusError(error)) {
    io.stderr.write(`agent-bus: ${errorLine(error.message)}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  const problem = storeProblem(error, busPaths(io.env).folder);
  io.stderr.write(problem !== null ? `agent-bus: ${problem} (${errorLine(message)})\n` : `agent-bus: unexpected error: ${errorLine(message)}\n`);
  if (setting(io.env, 'AGENT_BUS_DEBUG') && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return 1;
}

/**
 * Run the command line in `io.argv`. `runnerFor` gives the code of a command;
 * each shipped bundle carries exactly one, so it answers for that one alone.
 */
export async function main(io: CommandIo, runnerFor: (name: string) => CommandRunner | undefined): Promise<number> {
  const [first, ...rest] = io.argv;
  if (first === undefined) {
    io.stderr.write(topHelp());
    return 2;
  }
  if (first === '--version' || first === '-V') {
    io.stdout.write(`agent-bus ${version()}\n`);
    return 0;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = first === 'help' && rest[0] ? findCommand(rest[0]) : undefined;
    io.stdout.write(topic ? commandHelp(topic) : topHelp());
    return 0;
  }
  const spec = findCommand(first);
  if (!spec) {
    // `agent-bus --json agents`: an option before its command.
    const command = first.startsWith('-') ? rest.find((word) => findCommand(word) !== undefined) : undefined;
    if (command !== undefined) return report(io, new UsageError(`options go after the command: 'agent-bus ${command} ${first}'`));
    return report(io, new UsageError(`unknown command ${quoted(first)}. Run 'agent-bus --help' for the list.`));
  }
  try {
    const args = parseCommandArgs(spec, rest);
    if (args.values.help) {
      io.stdout.write(commandHelp(spec));
      return 0;
    }
    const run = runnerFor(spec.name);
    if (!run) throw new Error(`the code of ${quoted(spec.name)} is not in this bundle; reinstall agent-bus`);
    return await run(args, io);
  } catch (error) {
    if (error instanceof ReaderGone) return 0;
    return report(io, error);
  }
}
