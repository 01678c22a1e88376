/** `agent-bus resume NAME`: start a spawned agent that has ended again, on its own session, with a new prompt. */
import { busPaths } from '../../adapters/paths.js';
import { speakerName } from '../../client/speaker.js';
import { exitText, spawnView } from '../../core/fleet-ops.js';
import { resumeAgent, tmuxStarted } from '../../fleet/start.js';
import { BusError } from '../../model/errors.js';
import { hubAccess } from '../../adapters/hub-access.js';
import { resumeOverHub } from '../fleet-remote.js';
import { openBusHere, refuseOverHub } from '../../runtime.js';
import { readStdin } from '../context.js';
import type { CommandRunner } from '../spec.js';

/** What a resumed agent is told when no prompt is given. */
const GO_ON = 'Go on with your work from where you left it.';

export const run: CommandRunner = async (args, io) => {
  const given = typeof args.values.prompt === 'string' ? args.values.prompt : null;
  const prompt = given === '-' ? await readStdin(io.stdin(), 'resume: --prompt') : (given ?? GO_ON);
  const access = hubAccess(io.env);
  if (access !== null) return resumeOverHub(access, io, args.positionals[0] as string, given === null ? null : prompt, Boolean(args.values.json));
  refuseOverHub(io.env);
  const bus = openBusHere(io.env);
  try {
    const previous = await bus.fleet.find(args.positionals[0] as string);
    const spawn = await resumeAgent({ bus, env: io.env, busFolder: busPaths(io.env).folder, cli: { node: process.execPath, script: process.argv[1] as string } }, previous, prompt, speakerName(undefined, io.env));
    if (args.values.json) io.stdout.write(`${JSON.stringify(spawnView(spawn))}\n`);
    else io.stdout.write(`${spawn.name}\n`);
    if (spawn.state === 'exited' && spawn.exitCategory === 'start-failed') throw new BusError(`resume: ${spawn.name} could not start: ${spawn.exitNote ?? exitText(spawn)}`);
    if (spawn.state === 'queued') io.stderr.write('queued: the machine runs as many spawned agents as AGENT_BUS_MAX_SPAWNED allows; it starts when one ends\n');
    else if (spawn.state === 'running' && spawn.tmux !== null) io.stderr.write(`resumed ${spawn.client} session ${previous.sessionKey ?? '?'}: ${tmuxStarted(spawn, io.env)}\n`);
    else if (spawn.state === 'running' && !args.values.json) io.stderr.write(`resumed ${spawn.client} session ${previous.sessionKey ?? '?'} (pid ${spawn.pid ?? '?'}); follow it: agent-bus logs ${spawn.name} -f\n`);
    return 0;
  } finally {
    await bus.close();
  }
};
