/** `agent-bus hook-notification`: a client's notification that its session waits on a person (a permission prompt, a question). */
import { runHookCommand } from '../hook-command.js';
import { openHookBusHere } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = (args, io) => runHookCommand('notification', args, io, openHookBusHere);
