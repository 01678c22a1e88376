/** `agent-bus hook-session-start`: when a session starts, show it the notices due to it. */
import { runHookCommand } from '../hook-command.js';
import { openHookBusHere } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = (args, io) => runHookCommand('session-start', args, io, openHookBusHere);
