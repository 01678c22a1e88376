/**
 * The fleet across machines, as the hub keeps it: an agent asked of a machine is queued for that
 * machine's runner, which starts it there (the hub itself starts nothing); the runner then reports
 * on the agents of its machine alone. What a runner may run (its clients and repos) is what it
 * offered, and the repo's folder is the one it gave: nothing from the request names a command or a path.
 */
import type { Bus } from '../core/bus.js';
import { exitText, runnerAway, SPAWNABLE_CLIENTS, SpawnRefusedError, type SpawnView } from '../core/fleet-ops.js';
import type { TaskView } from '../core/task-ops.js';
import { BusError, InvalidInputError, NotFoundError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import type { RunnerRecord, SpawnRecord } from '../model/records.js';
import { shortId } from '../model/short-id.js';
import { setting, type Env } from '../model/settings.js';
import { lastLines, logPathFor } from './logs.js';
import { taskPrompt } from './start.js';

export interface RemoteSpawnRequest {
  client: string;
  /** The machine to run it on; none: the one runner present that offers the repo and the client. */
  machine: string | null;
  /** The repo by its name on the bus. */
  repo: string;
  prompt: string | null;
  label: string | null;
  model: string | null;
  yolo: boolean;
  taskId: string | null;
  spawnedBy: string;
  restartPolicy: 'on-failure' | null;
  maxRestarts: number | null;
  /** A worktree of its own, made by the runner on its machine. */
  worktree?: boolean;
}

function offers(runner: RunnerRecord, client: string, repo: string): boolean {
  return runner.clients.includes(client) && runner.repos.some((offered) => offered.repo === repo);
}

/** The runner to ask: the machine's, present; or, with no machine named, the one present runner that can. */
async function runnerFor(bus: Bus, request: RemoteSpawnRequest): Promise<RunnerRecord> {
  const now = bus.clock.nowMicros() / 1000;
  const present = (await bus.fleet.runners()).filter((runner) => !runnerAway(runner, now));
  if (request.machine !== null) {
    const runner = present.find((candidate) => candidate.machine === request.machine);
    if (runner === undefined) {
      const names = present.map((candidate) => candidate.machine);
      throw new BusError(`spawn: no runner is present on ${quoted(request.machine)}: ${names.length === 0 ? 'no runner is' : `runners are on ${names.join(', ')}`} ('agent-bus runner' there offers it)`);
    }
    if (!runner.clients.includes(request.client)) throw new SpawnRefusedError(`spawn: the runner on ${runner.machine} runs ${runner.clients.join(', ')}, not ${request.client}`);
    if (!runner.repos.some((offered) => offered.repo === request.repo)) {
      throw new SpawnRefusedError(`spawn: the runner on ${runner.machine} runs agents in ${runner.repos.map((offered) => offered.repo).join(', ') || 'no repo'}, not ${quoted(request.repo)} (its --repos)`);
    }
    return runner;
  }
  const able = present.filter((runner) => offers(runner, request.client, request.repo));
  if (able.length === 1) return able[0] as RunnerRecord;
  if (able.length === 0) throw new BusError(`spawn: no runner present offers ${request.client} in ${quoted(request.repo)}: start 'agent-bus runner' on a machine that has it`);
  throw new InvalidInputError(`spawn: several runners offer ${request.client} in ${quoted(request.repo)} (${able.map((runner) => runner.machine).join(', ')}): say which with --on MACHINE`);
}

/** Queue an agent for a runner's machine, holding its task from the start: the record, queued. */
export async function spawnOnRunner(bus: Bus, env: Env, request: RemoteSpawnRequest): Promise<SpawnRecord> {
  if (!(SPAWNABLE_CLIENTS as readonly string[]).includes(request.client)) {
    throw new InvalidInputError(`spawn: ${quoted(request.client)} is no client the bus can start: one of ${SPAWNABLE_CLIENTS.join(', ')}`);
  }
  const runner = await runnerFor(bus, request);
  const folder = runner.repos.find((offered) => offered.repo === request.repo)?.folder as string;
  const task: TaskView | null = request.taskId === null ? null : await bus.tasks.get(request.taskId);
  if (task === null && !request.prompt?.trim()) throw new InvalidInputError('spawn: give the agent its prompt, or a task to hold');
  // The asker's depth is what the bus knows of it, never what the request says.
  const asker = await bus.fleet.named(request.spawnedBy);
  const spawn = await bus.fleet.request({
    client: request.client,
    repo: request.repo,
    folder,
    machine: runner.machine,
    prompt: task === null ? (request.prompt as string) : taskPrompt(task, request.prompt?.trim() ? request.prompt : null),
    label: request.label,
    model: request.model,
    yolo: request.yolo,
    taskId: task?.id ?? null,
    spawnedBy: request.spawnedBy,
    askerDepth: asker?.depth ?? 0,
    maxDepth: setting(env, 'AGENT_BUS_MAX_SPAWN_DEPTH'),
    logPathFor: (name, spawnId) => logPathFor(runner.busFolder, name, spawnId),
    restartPolicy: request.restartPolicy,
    ...(request.maxRestarts === null ? {} : { maxRestarts: request.maxRestarts }),
    worktree: request.worktree ?? false,
  });
  if (task !== null) {
    try {
      await bus.tasks.take(task.id, spawn.name, false);
    } catch (error) {
      const note = `it could not take task ${shortId(task.id)}: ${(error as Error).message}`;
      await bus.fleet.exited(spawn.spawnId, { exitCode: null, exitSignal: null, exitCategory: 'start-failed', exitNote: note });
      throw error instanceof BusError ? error : new SpawnRefusedError(note);
    }
  }
  return spawn;
}

/** A spawned agent's exit or queue, for a stop: it is asked to stop; its runner ends it and records the exit. */
export async function askToStop(bus: Bus, nameOrId: string, actor: string): Promise<SpawnRecord> {
  const spawn = await bus.fleet.find(nameOrId);
  if (spawn.state === 'exited') throw new BusError(`stop: ${spawn.name} has ended already: ${exitText(spawn)}`);
  return bus.fleet.requestStop(spawn, actor);
}

/**
 * A spawn a runner names, when it is on a machine the runner's token's agent offers: the only
 * agents a runner may report on. Anything else is not found, so a runner learns nothing of others'.
 */
export async function runnersSpawn(bus: Bus, agent: string, spawnId: string): Promise<SpawnRecord> {
  const spawn = await bus.fleet.byId(spawnId);
  const runner = spawn === null ? undefined : (await bus.fleet.runners()).find((candidate) => candidate.machine === spawn.machine);
  if (spawn === null || runner === undefined || runner.agent !== agent) throw new NotFoundError(`no spawned agent ${quoted(spawnId)} on a machine this token's runner offers`);
  return spawn;
}

/** Spawns as listings show them, each marked with its machine's runner (present, away, or none). */
export function fleetViews(bus: Bus, spawns: SpawnRecord[], supervisorGone?: (supervisor: string) => boolean | null): Promise<SpawnView[]> {
  return bus.fleet.views(spawns, supervisorGone);
}

/** A spawned agent's output, its last `count` lines: as its runner sent them, or from its log where it runs here. */
export async function agentLogLines(bus: Bus, spawn: SpawnRecord, count: number): Promise<string[]> {
  const underRunner = (await bus.fleet.runners()).some((runner) => runner.machine === spawn.machine);
  if (!underRunner) return lastLines(spawn.logPath, count);
  return count === 0 ? [] : (await bus.fleet.remoteLog(spawn.spawnId)).slice(-count);
}

/** Resume an ended agent on its machine's runner, on its own session: the new run, queued for it. */
export async function resumeOnRunner(bus: Bus, previous: SpawnRecord, prompt: string, spawnedBy: string): Promise<SpawnRecord> {
  const now = bus.clock.nowMicros() / 1000;
  const runner = (await bus.fleet.runners()).find((candidate) => candidate.machine === previous.machine);
  if (runner === undefined) throw new BusError(`resume: ${previous.name} ran on ${previous.machine}, which has no runner: resume it there`);
  if (runnerAway(runner, now)) throw new BusError(`resume: the runner on ${previous.machine} is away: it resumes ${previous.name} once it is back`);
  return bus.fleet.resume(previous, { prompt, spawnedBy, machine: runner.machine, logPathFor: (name, spawnId) => logPathFor(runner.busFolder, name, spawnId) });
}
