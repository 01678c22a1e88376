/**
 * `agent-bus demo`: a first look at the bus doing its job, on a scratch bus of
 * its own. A Claude Code session joins, you mail it, the mail waits in its
 * inbox, its hook reads it, and the audit log shows both. Each step is the
 * real command, run as a subprocess and printed as you would type it. The
 * scratch bus is removed at the end (unless --keep), so nothing is left
 * behind that you did not ask for, and your own bus is never opened.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { registrationsFor } from '../../core/roster.js';
import { shellQuote } from '../../clients/config-files.js';
import { openBus } from '../../runtime.js';
import { speakerName } from '../context.js';
import { makeStyle, type Style } from '../../render/style.js';
import type { Env } from '../../model/settings.js';
import type { CommandIo, CommandRunner } from '../spec.js';

/** The session the tour mails: a Claude Code session in a repo named demo. */
export const DEMO_AGENT = 'demo/claude';

/** What the scratch bus's commands run with: the user's environment, pointed at the scratch bus. */
function scratchEnv(env: Env, folder: string): Env {
  const scratch: Env = { ...env, AGENT_BUS_DB: join(folder, 'bus', 'bus.db'), AGENT_BUS_AUDIT_LOG: join(folder, 'bus', 'audit.log') };
  // The tour runs on its own bus, never over a hub this machine talks to.
  delete scratch.AGENT_BUS_URL;
  delete scratch.AGENT_BUS_TOKEN;
  delete scratch.AGENT_BUS_HOME;
  // A build recording code caches runs this command too: its steps are not the commands' own warm-ups.
  delete scratch.AGENT_BUS_BUILD_CODE_CACHE;
  return scratch;
}

function whoYouAre(fallback: string): string {
  try {
    return userInfo().username || fallback;
  } catch {
    return fallback;
  }
}

class DemoStepFailed extends Error {}

/** Print one step as it would be typed, then run it: its output goes straight to the terminal. */
function step(io: CommandIo, style: Style, env: Env, args: string[]): void {
  io.stdout.write(`\n${style.bold(`$ agent-bus ${args.map(shellQuote).join(' ')}`)}\n`);
  const launcher = process.argv[1] as string;
  const result = spawnSync(process.execPath, [launcher, ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new DemoStepFailed(`demo: 'agent-bus ${args[0] ?? ''}' failed (${result.error?.message ?? `exit ${result.status}`}); the tour stops here`);
}

export const run: CommandRunner = async (args, io) => {
  const you = speakerName(undefined, io.env);
  const keep = args.values.keep === true;
  const folder = mkdtempSync(join(tmpdir(), 'agent-bus-demo-'));
  chmodSync(folder, 0o700);
  // A tour stopped with Ctrl-C leaves nothing behind either.
  const interrupted = (): void => {
    if (!keep) rmSync(folder, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const env = scratchEnv(io.env, folder);
    const style = await makeStyle(io.stdout, io.env);
    const say = (text: string): void => io.stdout.write(`${text}\n`);
    say(`agent-bus demo: a tour on a scratch bus in ${folder}${keep ? ' (kept afterwards)' : ', removed when the tour ends'}; your own bus is not touched.`);

    // What `agent-bus serve` does when a client starts a session in the repo.
    const repo = join(folder, 'demo');
    mkdirSync(repo);
    const bus = openBus(env);
    try {
      await bus.roster.register(registrationsFor(DEMO_AGENT, repo, true));
    } finally {
      await bus.close();
    }
    say(`\nA Claude Code session in the repo 'demo' joins the bus as ${DEMO_AGENT}, as its \`agent-bus serve\` would. You are ${you}.`);

    step(io, style, env, ['send', `hello from ${whoYouAre(you)}`, '--to', DEMO_AGENT]);
    say(`\nThe mail waits in ${DEMO_AGENT}'s inbox (pending=1) until the session reads it:`);
    step(io, style, env, ['agents']);
    say(`\nAt the session's next turn its hook reads the inbox and hands the mail to the model, as this does:`);
    step(io, style, env, ['inbox', '--name', DEMO_AGENT]);
    say('\nEvery send and read is in the audit log:');
    step(io, style, env, ['tail']);

    say('\nThat is the bus. Next, wire a repo of yours for your clients: `agent-bus init --clients claude,codex` in it');
    say('(docs/AGENT_SETUP.md walks through every client, with a check for each step).');
    if (keep) {
      say(`\nThe scratch bus is kept. To explore it: export AGENT_BUS_DB=${shellQuote(env.AGENT_BUS_DB as string)} AGENT_BUS_AUDIT_LOG=${shellQuote(env.AGENT_BUS_AUDIT_LOG as string)}`);
    }
    return 0;
  } catch (error) {
    if (error instanceof DemoStepFailed) {
      io.stderr.write(`agent-bus: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
    if (!keep) rmSync(folder, { recursive: true, force: true });
  }
};
