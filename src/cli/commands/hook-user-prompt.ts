/** `agent-bus hook-user-prompt`: before each prompt, show the model its new mail. */
import { runHookCommand } from '../hook-command.js';
import { openHookBusHere } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = (args, io) => runHookCommand('prompt', args, io, openHookBusHere);
