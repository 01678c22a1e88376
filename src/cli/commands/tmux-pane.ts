/**
 * `agent-bus tmux-pane EXIT_FILE -- EXECUTABLE ARGS…`: the process of a `spawn --tmux` agent's pane.
 * It starts the client on the pane's terminal, waits for it, and keeps how it ended (its code, or
 * the signal that ended it) in EXIT_FILE for the agent's supervisor, then exits as the client did.
 * The signals of the pane's process group (a stop, a person's Ctrl-C) reach the client as they reach
 * this one, which waits them out so the exit is always kept; a hangup (the window closed), which only
 * this one gets as its terminal's session leader, is passed on. tmux itself is not asked how the
 * client ended: tmux 3.3 now and then never reaps a pane's process, and then cannot say.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { errorLine, quoted } from '../../model/quote.js';
import { printable } from '../../render/format.js';
import type { CommandRunner } from '../spec.js';

interface Ending {
  code: number | null;
  signal: NodeJS.Signals | null;
  error: string | null;
}

export const run: CommandRunner = async (args, io) => {
  const [exitFile, executable, ...rest] = args.positionals as [string, string, ...string[]];
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGQUIT'] as const) process.on(signal, () => undefined);
  const child = spawn(executable, rest, { stdio: 'inherit', env: io.env as NodeJS.ProcessEnv });
  process.on('SIGHUP', () => {
    try {
      child.kill('SIGHUP');
    } catch {
      // Ended already.
    }
  });
  const ending = await new Promise<Ending>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error: error.message }));
    child.once('exit', (code, signal) => resolve({ code, signal, error: null }));
  });
  writeFileSync(exitFile, `${JSON.stringify(ending)}\n`, { mode: 0o600 });
  // The executable is whatever the pane was given: quoted, and the error naming it kept to one printable line.
  if (ending.error !== null) io.stderr.write(`agent-bus: could not start ${quoted(executable)}: ${printable(errorLine(ending.error))}\n`);
  if (ending.signal !== null) return 128 + (constants.signals[ending.signal] ?? 0);
  return ending.code ?? 1;
};
