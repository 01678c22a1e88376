/** The CLI's dispatcher: global flags, help, the subcommand, and one-line errors with exit codes. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isBusError } from '../model/errors.js';
import { storeProblem } from '../adapters/store-problem.js';
import { errorLine, quoted } from '../model/quote.js';
import { busPaths } from '../adapters/paths.js';
import { setting } from '../model/settings.js';
import { isUsageError, parseCommandArgs, UsageError } from './args.js';
import { findCommand } from './commands.js';
import { commandHelp, didYouMean, helpFor, nearestCommand, topHelp, usageLine } from './help.js';
import { isReaderGone } from './output.js';
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

/** The usage line a usage error is followed by: the command's, or the CLI's own. */
const TOP_USAGE = "Usage: agent-bus <command> [options]    (agent-bus --help lists the commands)";

function report(io: CommandIo, error: unknown, usage: string = TOP_USAGE): number {
  if (isBusError(error)) {
    io.stderr.write(`agent-bus: ${errorLine(error.message)}\n`);
    if (isUsageError(error)) io.stderr.write(`${usage}\n`);
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
    try {
      io.stdout.write(first === 'help' ? helpFor(rest[0]) : topHelp());
      return 0;
    } catch (error) {
      return report(io, error);
    }
  }
  const spec = findCommand(first);
  if (!spec) {
    // `agent-bus --json agents`: an option before its command.
    const command = first.startsWith('-') ? rest.find((word) => findCommand(word) !== undefined) : undefined;
    if (command !== undefined) return report(io, new UsageError(`options go after the command: 'agent-bus ${command} ${first}'`));
    return report(io, new UsageError(`unknown command ${quoted(first)}.${didYouMean(nearestCommand(first))}`));
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
    if (isReaderGone(error)) return 0;
    return report(io, error, `${usageLine(spec)}    (agent-bus ${spec.name} --help for more)`);
  }
}
