/** `agent-bus chat`: an interactive seat on the bus for the human. */
import { openBus } from '../../runtime.js';
import { UsageError } from '../args.js';
import { speakerName, speakerRegistrations } from '../context.js';
import { makeStyle } from '../../render/style.js';
import type { CommandRunner } from '../spec.js';
import { runChat } from '../../tui/chat.js';

export const run: CommandRunner = async (args, io) => {
  const stdin = io.stdin();
  if (!stdin.isTTY && !io.env.AGENT_BUS_CHAT_FORCE) throw new UsageError('chat: standard input is not a terminal; use send and inbox in scripts');
  const name = speakerName(args.values.name, io.env);
  const bus = openBus(io.env);
  try {
    return await runChat({ bus, name, registrations: speakerRegistrations(name, io.env, io.cwd), env: io.env, input: stdin, output: process.stdout, style: await makeStyle(process.stdout, io.env) });
  } finally {
    await bus.close();
  }
};
