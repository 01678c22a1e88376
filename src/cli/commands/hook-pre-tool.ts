/** `agent-bus hook-pre-tool`: before each tool call, show the critical notices due to this session. */
import { runHookCommand } from '../hook-command.js';
import { openHookBusHere } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = (args, io) => runHookCommand('pre-tool', args, io, openHookBusHere);
