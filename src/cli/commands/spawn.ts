/** `agent-bus spawn CLIENT`: start an agent headless (or interactive in tmux) in a repo, with a prompt; print its address and return. */
import { busPaths } from '../../adapters/paths.js';
import { gitRoot, repoName } from '../../adapters/identity.js';
import { speakerName, speakerRegistrations } from '../../client/speaker.js';
import { DEFAULT_MAX_RESTARTS, exitText, spawnView } from '../../core/fleet-ops.js';
import { startAgent, taskPrompt, tmuxStarted } from '../../fleet/start.js';
import { BusError } from '../../model/errors.js';
import { quoted } from '../../model/quote.js';
import { setting } from '../../model/settings.js';
import { hubAccess } from '../../adapters/hub-access.js';
import { spawnOverHub } from '../fleet-remote.js';
import { openBusHere, refuseOverHub } from '../../runtime.js';
import { UsageError } from '../args.js';
import { positiveInt, readStdin } from '../context.js';
import type { CommandRunner } from '../spec.js';
import { resolve } from 'node:path';

/**
 * The repo an agent is asked for through a hub, by its name on the bus: the git repo at --repo (or
 * here), else --repo taken as the name itself (a repo of the runner's machine, not of this one).
 */
function repoNamed(given: string | null, cwd: string): string {
  const root = gitRoot(given === null ? cwd : resolve(cwd, given));
  if (root !== null) return repoName(root);
  if (given !== null && !given.includes('/')) return given;
  throw new UsageError(`spawn: ${quoted(given ?? cwd)} is in no git repo: give --repo the repo's name (as the runner offers it)`);
}

export const run: CommandRunner = async (args, io) => {
  const [client] = args.positionals as [string];
  const given = typeof args.values.prompt === 'string' ? args.values.prompt : null;
  const taskId = typeof args.values.task === 'string' ? args.values.task.trim() : null;
  if (given === null && taskId === null) throw new UsageError('spawn: give the agent its prompt: --prompt TEXT (- reads it from standard input), or --task ID');
  const restart = typeof args.values.restart === 'string' ? args.values.restart.trim() : null;
  if (restart !== null && restart !== 'on-failure') throw new UsageError(`spawn: --restart takes on-failure, not ${quoted(restart)}`);
  if (args.values['max-restarts'] !== undefined && restart === null) throw new UsageError('spawn: --max-restarts goes with --restart on-failure');
  const maxRestarts = args.values['max-restarts'] === undefined ? undefined : positiveInt(args.values['max-restarts'], 'max-restarts', DEFAULT_MAX_RESTARTS, 100);
  const prompt = given === '-' ? await readStdin(io.stdin(), 'spawn: --prompt') : given;
  const on = typeof args.values.on === 'string' ? args.values.on.trim() : null;
  const tmux = Boolean(args.values.tmux);
  // One line, exit 2: the window is this machine's, and through a hub a runner elsewhere would start it.
  if (tmux && on !== null) throw new BusError('spawn: --tmux opens a tmux window on this machine: it does not go with --on', 2);
  const access = hubAccess(io.env);
  if (tmux && access !== null) throw new BusError(`spawn: --tmux opens a tmux window on this machine, and this machine spawns through the hub at ${access.url}: spawn without --tmux`, 2);
  if (on !== null && access === null) throw new UsageError("spawn: --on MACHINE asks a hub's runner there, and this machine uses no hub ('agent-bus login URL' sets one)");
  if (access !== null) {
    return spawnOverHub(
      access,
      io,
      {
        client,
        machine: on,
        repo: repoNamed(typeof args.values.repo === 'string' ? args.values.repo : null, io.cwd),
        prompt,
        label: typeof args.values.label === 'string' ? args.values.label : null,
        model: typeof args.values.model === 'string' ? args.values.model : null,
        yolo: Boolean(args.values.yolo),
        task: taskId,
        restart: restart === 'on-failure' ? 'on-failure' : null,
        max_restarts: maxRestarts ?? null,
        worktree: Boolean(args.values.worktree),
      },
      Boolean(args.values.json),
    );
  }
  const start = typeof args.values.repo === 'string' ? resolve(io.cwd, args.values.repo) : io.cwd;
  const root = gitRoot(start);
  if (root === null) throw new BusError(`spawn: ${quoted(start)} is in no git repo: run it inside the repo, or give --repo PATH`);
  refuseOverHub(io.env);
  const bus = openBusHere(io.env);
  try {
    // The one who asks is on the roster, so what the fleet tells them (a restart given up) reaches them.
    const spawnedBy = speakerName(undefined, io.env);
    await bus.roster.register(speakerRegistrations(spawnedBy, io.env, io.cwd));
    const task = taskId === null ? null : await bus.tasks.get(taskId);
    const spawn = await startAgent(
      { bus, env: io.env, busFolder: busPaths(io.env).folder, cli: { node: process.execPath, script: process.argv[1] as string } },
      {
        client,
        repo: repoName(root),
        folder: root,
        prompt: task === null ? (prompt as string) : taskPrompt(task, prompt),
        label: typeof args.values.label === 'string' ? args.values.label : null,
        model: typeof args.values.model === 'string' ? args.values.model : null,
        yolo: Boolean(args.values.yolo),
        task,
        spawnedBy,
        worktree: Boolean(args.values.worktree),
        restartPolicy: restart === 'on-failure' ? 'on-failure' : null,
        ...(maxRestarts === undefined ? {} : { maxRestarts }),
        tmux,
      },
    );
    if (args.values.json) io.stdout.write(`${JSON.stringify(spawnView(spawn))}\n`);
    else io.stdout.write(`${spawn.name}\n`);
    if (spawn.state === 'exited') {
      // It ended before spawn returned: a start that failed is a failure, one that ran and finished is said as it is.
      if (spawn.exitCategory === 'start-failed') throw new BusError(`spawn: ${spawn.name} could not start: ${spawn.exitNote ?? exitText(spawn)}; its log is ${spawn.logPath}`);
      io.stderr.write(`${spawn.name} has already ended: ${exitText(spawn)}; its log: agent-bus logs ${spawn.name}\n`);
    } else if (spawn.state === 'queued') {
      io.stderr.write(`queued: ${setting(io.env, 'AGENT_BUS_MAX_SPAWNED')} spawned agents run on this machine (AGENT_BUS_MAX_SPAWNED); it starts when one ends\n`);
    } else if (spawn.tmux !== null) {
      io.stderr.write(`${tmuxStarted(spawn, io.env)}; stop it: agent-bus stop ${spawn.name}\n`);
    } else if (!args.values.json) {
      io.stderr.write(`started ${spawn.client} (pid ${spawn.pid ?? '?'}) in ${spawn.folder}${spawn.yolo ? ', with --yolo' : ''}; follow it: agent-bus logs ${spawn.name} -f; stop it: agent-bus stop ${spawn.name}\n`);
    }
    return 0;
  } finally {
    await bus.close();
  }
};
