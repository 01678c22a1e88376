/** `agent-bus chat`: an interactive seat on the bus for the human. */
import { openClient } from '../../connect.js';
import { UsageError } from '../args.js';
import { askedName } from '../context.js';
import { setting } from '../../model/settings.js';
import { makeStyle } from '../../render/style.js';
import type { CommandRunner } from '../spec.js';
import { runChat } from '../../tui/chat.js';

export const run: CommandRunner = async (args, io) => {
  const stdin = io.stdin();
  if (!stdin.isTTY && !setting(io.env, 'AGENT_BUS_CHAT_FORCE')) throw new UsageError('chat: standard input is not a terminal; use send and inbox in scripts');
  const style = await makeStyle(process.stdout, io.env);
  // Over a hub the seat is the token's agent (or, with --name, one of its sessions, which the hub checks).
  const client = openClient(io.env, { cwd: io.cwd, as: askedName(args.values.name, io.env) });
  try {
    const name = await client.speaker();
    client.keepSearchIndexCurrent();
    client.serveOutbox();
    return await runChat({ client, name, env: io.env, input: stdin, output: process.stdout, style });
  } finally {
    await client.close();
  }
};
