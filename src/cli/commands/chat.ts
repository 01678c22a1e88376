/** `agent-bus chat`: an interactive seat on the bus for the human. */
import { openBus } from '../../runtime.js';
import { UsageError } from '../args.js';
import { speakerName, speakerRegistrations } from '../context.js';
import { makeStyle } from '../../render/style.js';
import type { CommandRunner } from '../spec.js';
import { runChat } from '../../tui/chat.js';
import { hubAccess } from '../../remote/settings.js';
import { RemoteChatBus } from '../../remote/chat-bus.js';
import { callHubTool } from '../../remote/tools.js';

export const run: CommandRunner = async (args, io) => {
  const stdin = io.stdin();
  if (!stdin.isTTY && !io.env.AGENT_BUS_CHAT_FORCE) throw new UsageError('chat: standard input is not a terminal; use send and inbox in scripts');
  const style = await makeStyle(process.stdout, io.env);
  const access = hubAccess(io.env);
  if (access !== null) {
    // Over the hub the seat is the token's agent (or, with --name, one of its sessions, which the hub checks).
    const as = typeof args.values.name === 'string' ? speakerName(args.values.name, io.env) : null;
    const { speaker } = await callHubTool<{ name: string }>(access, 'whoami', {}, as);
    return runChat({ bus: new RemoteChatBus(access, as), name: speaker, registrations: [], env: io.env, input: stdin, output: process.stdout, style, overHub: true });
  }
  const name = speakerName(args.values.name, io.env);
  const bus = openBus(io.env);
  bus.keepSearchIndexCurrent();
  try {
    return await runChat({ bus, name, registrations: speakerRegistrations(name, io.env, io.cwd), env: io.env, input: stdin, output: process.stdout, style });
  } finally {
    await bus.close();
  }
};
