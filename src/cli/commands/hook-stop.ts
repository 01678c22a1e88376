/** `agent-bus hook-stop`: when the agent is about to stop, keep the turn open for mail it must handle. */
import { runHookCommand } from '../hook-command.js';
import { openHookBusHere } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = (args, io) => runHookCommand('stop', args, io, openHookBusHere);
