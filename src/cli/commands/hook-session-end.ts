/** `agent-bus hook-session-end`: a client's session has ended. */
import { runHookCommand } from '../hook-command.js';
import { openHookBusHere } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = (args, io) => runHookCommand('session-end', args, io, openHookBusHere);
